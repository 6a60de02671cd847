-- A turn parked by a `pause` budget is `queued` with awaiting 'budget' (shown `waiting_budget`):
-- it still counts as active, and its job waits delayed. Parking it asks for action as a client's
-- tools or a person's approval do: the commit that parks it records `turn.requires_action`.
-- A turn's usage in its webhooks is the usage ledger's sum for it (discarded attempts, repairs and
-- compactions included, with its cost), from the one function the API's views read it with too.
CREATE OR REPLACE FUNCTION turn_ledger_usage(p_turn_id text) RETURNS jsonb LANGUAGE sql STABLE AS $$
  SELECT jsonb_build_object(
    'promptTokens', COALESCE(SUM(prompt_tokens), 0)::bigint,
    'cachedPromptTokens', COALESCE(SUM(cached_prompt_tokens), 0)::bigint,
    'completionTokens', COALESCE(SUM(completion_tokens), 0)::bigint,
    'reasoningTokens', COALESCE(SUM(reasoning_tokens), 0)::bigint,
    'totalTokens', COALESCE(SUM(total_tokens), 0)::bigint,
    -- Rounded to a millionth of a cent: a sum of float prices carries noise below that.
    'costUsd', round(COALESCE(SUM(cost_usd), 0), 8)::float8,
    'calls', COUNT(*)::bigint)
  FROM provider_calls WHERE turn_id = p_turn_id
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
    'batchId', v_batch_id, 'customId', v_custom_id)));
  RETURN NULL;
END $$;
