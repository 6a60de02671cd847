-- Budgets per API key: a turn records the key that admitted it, and each of its provider calls the
-- same key, so that a key's budget (and usage grouped by key) is a sum over the ledger, as a
-- user's is. Turns made without a key (a batch's items, those admitted before this migration)
-- have none and count against their user's budget only.
ALTER TABLE turns ADD COLUMN IF NOT EXISTS key_id text;
ALTER TABLE provider_calls ADD COLUMN IF NOT EXISTS key_id text;
CREATE INDEX IF NOT EXISTS provider_calls_key_time ON provider_calls (key_id, started_at) WHERE key_id IS NOT NULL;
CREATE INDEX IF NOT EXISTS turns_key_budget_wait ON turns (key_id) WHERE status = 'queued' AND awaiting = 'budget';

-- As 0023, with the turn's key.
DROP FUNCTION IF EXISTS admit_turn_if_clear(text, text, text, jsonb, jsonb, text, text, integer, text, text, bigint, text, integer);
CREATE OR REPLACE FUNCTION admit_turn_if_clear(
  new_id text,
  new_conversation_id text,
  new_user_id text,
  new_input jsonb,
  new_options jsonb,
  new_idempotency_key text,
  new_request_hash text,
  new_batch_priority integer,
  new_traceparent text,
  new_branch text,
  new_from_message_id bigint,
  new_ui_message_id text,
  new_key_id text,
  max_active_of_user integer
) RETURNS turn_admission
LANGUAGE plpgsql AS $$
DECLARE
  result turn_admission;
  admitted turns;
BEGIN
  PERFORM 1 FROM conversations WHERE id = new_conversation_id AND user_id = new_user_id FOR UPDATE;
  IF NOT FOUND THEN
    result.outcome := 'missing';
    RETURN result;
  END IF;
  SELECT count(*)::integer INTO result.active_of_user FROM turns WHERE user_id = new_user_id AND status IN ('queued', 'running', 'waiting_tools');
  IF result.active_of_user >= max_active_of_user
     OR EXISTS (SELECT 1 FROM turns WHERE conversation_id = new_conversation_id AND status IN ('queued', 'running', 'waiting_tools'))
     OR (new_idempotency_key IS NOT NULL
         AND EXISTS (SELECT 1 FROM turns WHERE conversation_id = new_conversation_id AND idempotency_key = new_idempotency_key))
     OR EXISTS (
       SELECT 1 FROM (
         SELECT id, tool_calls FROM messages
         WHERE conversation_id = new_conversation_id AND superseded_by IS NULL AND role <> 'tool'
         ORDER BY id DESC LIMIT 1
       ) last_step
       WHERE jsonb_typeof(last_step.tool_calls) = 'array'
         AND jsonb_array_length(last_step.tool_calls) > (
           SELECT count(*) FROM messages WHERE conversation_id = new_conversation_id AND superseded_by IS NULL AND id > last_step.id))
  THEN
    result.outcome := 'not_clear';
    RETURN result;
  END IF;
  INSERT INTO turns (id, conversation_id, user_id, status, input, options, idempotency_key, request_hash, batch_priority, traceparent, branch, from_message_id, ui_message_id, key_id)
  VALUES (new_id, new_conversation_id, new_user_id, 'queued', new_input, new_options, new_idempotency_key, new_request_hash, new_batch_priority, new_traceparent, new_branch, new_from_message_id, new_ui_message_id, new_key_id)
  RETURNING * INTO admitted;
  result.outcome := 'admitted';
  result.turn := admitted;
  RETURN result;
END
$$;
