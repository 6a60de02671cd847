-- A turn is no longer admitted in one call when the conversation's path ends with calls that have
-- no results (the caller's functions an OpenAI response ended with, until its next input answers
-- them): a message after them would be a history every provider refuses, so every later turn of
-- the conversation would fail. The caller then reads the facts in a transaction and refuses it
-- (TurnService). The last step is found from the path's end through its index
-- (messages_conversation_active), whatever the conversation's length. Otherwise as 0020.
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
  INSERT INTO turns (id, conversation_id, user_id, status, input, options, idempotency_key, request_hash, batch_priority, traceparent, branch, from_message_id, ui_message_id)
  VALUES (new_id, new_conversation_id, new_user_id, 'queued', new_input, new_options, new_idempotency_key, new_request_hash, new_batch_priority, new_traceparent, new_branch, new_from_message_id, new_ui_message_id)
  RETURNING * INTO admitted;
  result.outcome := 'admitted';
  result.turn := admitted;
  RETURN result;
END
$$;
