-- Webhooks (docs/API.md, "Webhooks"): endpoints a user registers, and one delivery row per
-- (event, endpoint). The delivery rows are the outbox: triggers write them in the transaction
-- that ends the turn or the batch (whichever statement does it: complete_turn_with_final_step,
-- the repository, a cancel), so an end is never committed without its events, and a crash
-- between the commit and the delivery job loses nothing (the relay enqueues what is left).
CREATE TABLE IF NOT EXISTS webhook_endpoints (
  id              text PRIMARY KEY,
  ordinal         bigserial NOT NULL UNIQUE,
  user_id         text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  url             text NOT NULL,
  -- Event types, or '*' for all.
  events          text[] NOT NULL,
  description     text,
  -- Encrypted with WEBHOOK_SECRET_KEY (src/webhooks/secret-box.ts); never stored in the clear.
  secret          text NOT NULL,
  -- After a rotation the old secret signs too, until previous_secret_until.
  previous_secret text,
  previous_secret_until timestamptz,
  -- Set by the first failed attempt after a success; an endpoint failing long enough is disabled.
  failing_since   timestamptz,
  disabled_at     timestamptz,
  disabled_reason text,
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS webhook_endpoints_user ON webhook_endpoints (user_id, ordinal);

CREATE TABLE IF NOT EXISTS webhook_deliveries (
  id              text PRIMARY KEY,
  ordinal         bigserial NOT NULL UNIQUE,
  endpoint_id     text NOT NULL REFERENCES webhook_endpoints(id) ON DELETE CASCADE,
  -- The event's id: the body's `id` and the `webhook-id` header, the same for every endpoint and retry.
  event_id        text NOT NULL,
  type            text NOT NULL,
  -- The body sent, {id, type, createdAt, data}, fixed when the event was recorded.
  payload         jsonb NOT NULL,
  -- pending | delivered | failed
  status          text NOT NULL DEFAULT 'pending',
  attempts        integer NOT NULL DEFAULT 0,
  last_status_code integer,
  last_error      text,
  next_attempt_at timestamptz,
  -- Null until a delivery job exists for it (the relay adds the job, then sets it).
  enqueued_at     timestamptz,
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  delivered_at    timestamptz,
  UNIQUE (endpoint_id, event_id)
);
CREATE INDEX IF NOT EXISTS webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, ordinal DESC);
CREATE INDEX IF NOT EXISTS webhook_deliveries_unenqueued ON webhook_deliveries (ordinal) WHERE status = 'pending' AND enqueued_at IS NULL;
CREATE INDEX IF NOT EXISTS webhook_deliveries_pending ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';

-- One event: a delivery row for each of the user's live endpoints that takes its type. Nothing
-- is written for a user without such an endpoint, so turns pay nothing for webhooks unused.
CREATE OR REPLACE FUNCTION record_webhook_event(p_user_id text, p_type text, p_data jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_event_id text := 'evt_' || replace(gen_random_uuid()::text, '-', '');
  v_created timestamptz := clock_timestamp();
BEGIN
  INSERT INTO webhook_deliveries (id, endpoint_id, event_id, type, payload, next_attempt_at, created_at)
  SELECT 'whd_' || replace(gen_random_uuid()::text, '-', ''), e.id, v_event_id, p_type,
    jsonb_build_object('id', v_event_id, 'type', p_type,
      'createdAt', to_char(v_created AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'data', p_data),
    v_created, v_created
  FROM webhook_endpoints e
  WHERE e.user_id = p_user_id AND e.disabled_at IS NULL AND (p_type = ANY (e.events) OR '*' = ANY (e.events));
END $$;

-- A turn's end, and a turn that starts waiting for someone: its client's tools (`awaiting`
-- 'clients') or a person's approval ('approvals', shown as the status `waiting_approval`). This is
-- the one place a turn asks for action: whatever parks it, the commit that parks it records it.
CREATE OR REPLACE FUNCTION turn_webhook_event() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
  v_type text;
  v_last_seq bigint;
  v_batch_id text;
  v_custom_id text;
BEGIN
  IF NEW.status IN ('completed', 'failed', 'cancelled') AND OLD.status IN ('queued', 'running', 'waiting_tools') THEN
    v_type := 'turn.' || NEW.status;
  ELSIF NEW.status = 'waiting_tools' AND NEW.awaiting IN ('clients', 'approvals') AND (OLD.status <> NEW.status OR OLD.awaiting IS DISTINCT FROM NEW.awaiting) THEN
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
  PERFORM record_webhook_event(NEW.user_id, v_type, jsonb_strip_nulls(jsonb_build_object(
    'turnId', NEW.id, 'conversationId', NEW.conversation_id,
    'status', CASE WHEN NEW.status = 'waiting_tools' AND NEW.awaiting = 'approvals' THEN 'waiting_approval' ELSE NEW.status END,
    'finishReason', NEW.finish_reason, 'error', NEW.error, 'usage', NEW.usage, 'lastSeq', v_last_seq,
    'batchId', v_batch_id, 'customId', v_custom_id)));
  RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS turn_webhook_event ON turns;
CREATE TRIGGER turn_webhook_event AFTER UPDATE OF status, awaiting ON turns
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status OR OLD.awaiting IS DISTINCT FROM NEW.awaiting)
  EXECUTE FUNCTION turn_webhook_event();

CREATE OR REPLACE FUNCTION batch_webhook_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE user_id = NEW.user_id AND disabled_at IS NULL) THEN
    RETURN NULL;
  END IF;
  PERFORM record_webhook_event(NEW.user_id, 'batch.' || NEW.status, jsonb_build_object(
    'batchId', NEW.id, 'status', NEW.status,
    'counts', jsonb_build_object('total', NEW.total, 'queued', NEW.queued, 'running', NEW.running,
      'succeeded', NEW.succeeded, 'failed', NEW.failed, 'cancelled', NEW.cancelled),
    'usage', jsonb_build_object('promptTokens', NEW.prompt_tokens, 'completionTokens', NEW.completion_tokens, 'totalTokens', NEW.total_tokens)));
  RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS batch_webhook_event ON batches;
CREATE TRIGGER batch_webhook_event AFTER UPDATE OF status ON batches
  FOR EACH ROW WHEN (OLD.status IS DISTINCT FROM NEW.status AND NEW.status IN ('completed', 'cancelled'))
  EXECUTE FUNCTION batch_webhook_event();
