-- Every request a turn sent a provider, one row each under its own id: a fallback within an
-- attempt is a row of its own, and so is a request whose stream was discarded. Written when the
-- request ends (a worker that dies mid-request leaves its row to the next attempt, which knows
-- of it from the in-flight marker only once it had output).
CREATE TABLE IF NOT EXISTS provider_calls (
  id         text PRIMARY KEY,
  turn_id    text NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
  kind       text NOT NULL,
  step       integer NOT NULL,
  attempt    integer NOT NULL,
  provider   text NOT NULL,
  model      text NOT NULL,
  started_at timestamptz NOT NULL,
  ended_at   timestamptz NOT NULL,
  outcome    text NOT NULL,
  error      jsonb,
  usage      jsonb
);
CREATE INDEX IF NOT EXISTS provider_calls_turn ON provider_calls (turn_id, started_at);
