-- Three features redefined the same two functions side by side (0027: a turn's structured output
-- in its webhooks; 0032 and 0033: waiting_budget, the ledger's usage, the admitting key; 0040: the
-- turn's agent). Each took the one before it as its base, not the others: here both functions
-- are written once with everything, and the overloads each left are dropped.
DROP FUNCTION IF EXISTS admit_turn_if_clear(text, text, text, jsonb, jsonb, text, text, integer, text, text, bigint, text, text, integer);
DROP FUNCTION IF EXISTS admit_turn_if_clear(text, text, text, jsonb, jsonb, text, text, integer, text, text, bigint, text, text, integer, integer);
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
  new_agent_id text,
  new_agent_version integer,
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
  INSERT INTO turns (id, conversation_id, user_id, status, input, options, idempotency_key, request_hash, batch_priority, traceparent, branch, from_message_id, ui_message_id, key_id, agent_id, agent_version)
  VALUES (new_id, new_conversation_id, new_user_id, 'queued', new_input, new_options, new_idempotency_key, new_request_hash, new_batch_priority, new_traceparent, new_branch, new_from_message_id, new_ui_message_id, new_key_id, new_agent_id, new_agent_version)
  RETURNING * INTO admitted;
  result.outcome := 'admitted';
  result.turn := admitted;
  RETURN result;
END
$$;

CREATE OR REPLACE FUNCTION turn_webhook_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_type text;
  v_last_seq bigint;
  v_batch_id text;
  v_custom_id text;
  v_usage jsonb;
BEGIN
  IF NEW.status IN ('completed', 'failed', 'cancelled') AND OLD.status IN ('queued', 'running', 'waiting_tools') THEN
    v_type := 'turn.' || NEW.status;
  ELSIF NEW.status = 'waiting_tools' AND NEW.awaiting IN ('clients', 'approvals') AND (OLD.status <> NEW.status OR OLD.awaiting IS DISTINCT FROM NEW.awaiting) THEN
    v_type := 'turn.requires_action';
  ELSIF NEW.status = 'queued' AND NEW.awaiting = 'budget' AND OLD.awaiting IS DISTINCT FROM NEW.awaiting THEN
    v_type := 'turn.requires_action';
  ELSE
    RETURN NULL;
  END IF;
  IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE user_id = NEW.user_id AND disabled_at IS NULL) THEN
    RETURN NULL;
  END IF;
  -- The end's events are appended right after the seq the conversation has reached.
  SELECT c.last_seq + COALESCE(jsonb_array_length(NEW.end_events), 0), c.batch_id INTO v_last_seq, v_batch_id
  FROM conversations c WHERE c.id = NEW.conversation_id;
  IF v_batch_id IS NOT NULL THEN
    SELECT custom_id INTO v_custom_id FROM batch_items WHERE batch_id = v_batch_id AND conversation_id = NEW.conversation_id LIMIT 1;
  END IF;
  v_usage := turn_ledger_usage(NEW.id) - 'calls';
  PERFORM record_webhook_event(NEW.user_id, v_type, jsonb_strip_nulls(jsonb_build_object(
    'turnId', NEW.id, 'conversationId', NEW.conversation_id,
    'status', CASE
      WHEN NEW.status = 'waiting_tools' AND NEW.awaiting = 'approvals' THEN 'waiting_approval'
      WHEN NEW.status = 'queued' AND NEW.awaiting = 'budget' THEN 'waiting_budget'
      ELSE NEW.status END,
    'finishReason', NEW.finish_reason, 'error', NEW.error, 'usage', v_usage, 'lastSeq', v_last_seq,
    'batchId', v_batch_id, 'customId', v_custom_id, 'agentId', NEW.agent_id, 'agentVersion', NEW.agent_version))
    -- Added after the nulls are stripped: an output's own nulls are part of it.
    || CASE WHEN NEW.output IS NOT NULL THEN jsonb_build_object('output', NEW.output) ELSE '{}'::jsonb END);
  RETURN NULL;
END $$;
