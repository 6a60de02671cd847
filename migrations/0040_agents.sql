-- Agents (docs/API.md, "Agents"): a user's named configuration, kept in versions that never
-- change. `agents` holds what is the agent's as a whole (its name, its latest version, whether it
-- is archived); `agent_versions` one row per version, its configuration as the API took it.
CREATE TABLE IF NOT EXISTS agents (
  id             text PRIMARY KEY,
  ordinal        bigserial NOT NULL UNIQUE,
  user_id        text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name           text NOT NULL,
  latest_version integer NOT NULL,
  archived_at    timestamptz,
  created_at     timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at     timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS agents_user_ordinal ON agents (user_id, ordinal DESC);
-- A name picks one agent (`agent: "support@2"`): unique among the user's agents not archived.
CREATE UNIQUE INDEX IF NOT EXISTS agents_user_name ON agents (user_id, name) WHERE archived_at IS NULL;

CREATE TABLE IF NOT EXISTS agent_versions (
  agent_id   text NOT NULL REFERENCES agents(id) ON DELETE CASCADE,
  version    integer NOT NULL CHECK (version >= 1),
  config     jsonb NOT NULL,
  -- A restore's source version.
  restored_from integer,
  created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
  PRIMARY KEY (agent_id, version)
);

-- A conversation's agent: its latest version at each turn (agent_version null), or one pinned.
ALTER TABLE conversations ADD COLUMN IF NOT EXISTS agent_id text REFERENCES agents(id) ON DELETE SET NULL;
ALTER TABLE conversations ADD COLUMN IF NOT EXISTS agent_version integer;

-- The version a turn runs on, resolved when it is recorded and kept through its restarts.
ALTER TABLE turns ADD COLUMN IF NOT EXISTS agent_id text;
ALTER TABLE turns ADD COLUMN IF NOT EXISTS agent_version integer;

-- Every way a turn is recorded (admit_turn_if_clear, TurnsRepository.insert) comes through here:
-- a turn that names no agent of its own takes its conversation's; a reference with no version
-- takes the agent's latest at this moment. The API checked a turn's own reference beforehand (an
-- archived or unknown agent is a 404); a conversation's goes on with an archived agent's latest.
CREATE OR REPLACE FUNCTION resolve_turn_agent() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.agent_id IS NULL THEN
    SELECT c.agent_id, c.agent_version INTO NEW.agent_id, NEW.agent_version FROM conversations c WHERE c.id = NEW.conversation_id;
  END IF;
  IF NEW.agent_id IS NOT NULL AND NEW.agent_version IS NULL THEN
    SELECT a.latest_version INTO NEW.agent_version FROM agents a WHERE a.id = NEW.agent_id;
  END IF;
  RETURN NEW;
END $$;

DROP TRIGGER IF EXISTS resolve_turn_agent ON turns;
CREATE TRIGGER resolve_turn_agent BEFORE INSERT ON turns FOR EACH ROW EXECUTE FUNCTION resolve_turn_agent();

-- As 0023, with the turn's own agent reference (null: its conversation's, see above).
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
  INSERT INTO turns (id, conversation_id, user_id, status, input, options, idempotency_key, request_hash, batch_priority, traceparent, branch, from_message_id, ui_message_id, agent_id, agent_version)
  VALUES (new_id, new_conversation_id, new_user_id, 'queued', new_input, new_options, new_idempotency_key, new_request_hash, new_batch_priority, new_traceparent, new_branch, new_from_message_id, new_ui_message_id, new_agent_id, new_agent_version)
  RETURNING * INTO admitted;
  result.outcome := 'admitted';
  result.turn := admitted;
  RETURN result;
END
$$;

-- As 0016, the turn's agent added to its webhooks' data.
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
  SELECT c.last_seq + COALESCE(jsonb_array_length(NEW.end_events), 0), c.batch_id INTO v_last_seq, v_batch_id
  FROM conversations c WHERE c.id = NEW.conversation_id;
  IF v_batch_id IS NOT NULL THEN
    SELECT custom_id INTO v_custom_id FROM batch_items WHERE batch_id = v_batch_id AND conversation_id = NEW.conversation_id LIMIT 1;
  END IF;
  PERFORM record_webhook_event(NEW.user_id, v_type, jsonb_strip_nulls(jsonb_build_object(
    'turnId', NEW.id, 'conversationId', NEW.conversation_id,
    'status', CASE WHEN NEW.status = 'waiting_tools' AND NEW.awaiting = 'approvals' THEN 'waiting_approval' ELSE NEW.status END,
    'finishReason', NEW.finish_reason, 'error', NEW.error, 'usage', NEW.usage, 'lastSeq', v_last_seq,
    'batchId', v_batch_id, 'customId', v_custom_id, 'agentId', NEW.agent_id, 'agentVersion', NEW.agent_version)));
  RETURN NULL;
END $$;
