-- The `tool` message a settled call gives the model, stored with its outcome (the text is made
-- in TypeScript, `toolMessageContent`): a step's tool messages can then be written by a single
-- statement, the one that takes the turn for its continuation.
ALTER TABLE tool_calls ADD COLUMN message text;

-- Calls of unfinished turns settled before this migration (finished turns have their tool
-- messages already): the same content, in PostgreSQL's JSON spelling.
UPDATE tool_calls SET message = CASE
    WHEN status = 'succeeded' THEN CASE WHEN jsonb_typeof(result) = 'string' THEN result #>> '{}' ELSE coalesce(result, 'null'::jsonb)::text END
    ELSE jsonb_build_object('error', jsonb_build_object(
      'code', coalesce(error->>'code', 'outcome_unknown'),
      'message', coalesce(error->>'message', 'the tool call ended without a result')))::text
  END
WHERE status IN ('succeeded', 'failed', 'cancelled')
  AND turn_id IN (SELECT id FROM turns WHERE status IN ('queued', 'running', 'waiting_tools'));
