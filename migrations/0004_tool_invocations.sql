-- Direct invocations (POST /v1/tools/:name/invoke), run as tool jobs like a turn's calls.
-- With an Idempotency-Key the id is derived from (user, key): the same key names the same
-- invocation, whose stored outcome answers every repeat; the tool never runs for it twice.
CREATE TABLE IF NOT EXISTS tool_invocations (
  id              text PRIMARY KEY,
  user_id         text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  tool_name       text NOT NULL,
  params          jsonb NOT NULL,
  idempotency_key text,
  request_hash    text NOT NULL,
  status          text NOT NULL DEFAULT 'pending',
  attempts        integer NOT NULL DEFAULT 0,
  result          jsonb,
  error           jsonb,
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  started_at      timestamptz,
  finished_at     timestamptz
);
