-- A schedule run's turn carries its schedule in its webhooks (docs/API.md, "Schedules": "their
-- turns' webhooks carry `scheduleId`"): turn_webhook_event as 0056 wrote it, with `scheduleId`
-- read from the run row written in the transaction that admitted the turn. The index makes that
-- read one lookup per event.
CREATE INDEX IF NOT EXISTS schedule_runs_turn ON schedule_runs (turn_id) WHERE turn_id IS NOT NULL;

CREATE OR REPLACE FUNCTION turn_webhook_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_type text;
  v_last_seq bigint;
  v_batch_id text;
  v_custom_id text;
  v_usage jsonb;
  v_schedule_id text;
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
  SELECT schedule_id INTO v_schedule_id FROM schedule_runs WHERE turn_id = NEW.id LIMIT 1;
  PERFORM record_webhook_event(NEW.user_id, v_type, jsonb_strip_nulls(jsonb_build_object(
    'turnId', NEW.id, 'conversationId', NEW.conversation_id,
    'status', CASE
      WHEN NEW.status = 'waiting_tools' AND NEW.awaiting = 'approvals' THEN 'waiting_approval'
      WHEN NEW.status = 'queued' AND NEW.awaiting = 'budget' THEN 'waiting_budget'
      ELSE NEW.status END,
    'finishReason', NEW.finish_reason, 'error', NEW.error, 'usage', v_usage, 'lastSeq', v_last_seq,
    'batchId', v_batch_id, 'customId', v_custom_id, 'agentId', NEW.agent_id, 'agentVersion', NEW.agent_version,
    'scheduleId', v_schedule_id))
    -- Added after the nulls are stripped: an output's own nulls are part of it.
    || CASE WHEN NEW.output IS NOT NULL THEN jsonb_build_object('output', NEW.output) ELSE '{}'::jsonb END);
  RETURN NULL;
END $$;
