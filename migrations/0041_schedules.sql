-- Schedules (docs/API.md, "Schedules"): turns that run by themselves. Every worker races for due
-- rows (`FOR UPDATE SKIP LOCKED`, schedules_due) and claims them for a lease (claimed_until): a
-- worker that dies with a claim leaves the tick to the next one once the lease ends. A run is a
-- row unique on (schedule_id, scheduled_for), written in the transaction that records its turn,
-- so a tick makes at most one run whatever the number of workers and restarts
-- (docs/guides/schedules.md).
CREATE TABLE IF NOT EXISTS schedules (
  id              text PRIMARY KEY,
  ordinal         bigserial NOT NULL UNIQUE,
  user_id         text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  content         jsonb NOT NULL,
  agent_id        text,
  agent_version   integer,
  -- Each run a turn of this conversation; null: each run a new conversation.
  conversation_id text REFERENCES conversations(id) ON DELETE CASCADE,
  cron            text,
  every_ms        bigint,
  at              timestamptz,
  -- `every`: its first tick (startAt, else one interval after it was made).
  first_at        timestamptz,
  timezone        text NOT NULL DEFAULT 'UTC',
  overlap         text NOT NULL CHECK (overlap IN ('skip', 'enqueue', 'interrupt')),
  catch_up        text NOT NULL CHECK (catch_up IN ('one', 'skip')),
  enabled         boolean NOT NULL DEFAULT true,
  start_at        timestamptz,
  end_at          timestamptz,
  metadata        jsonb,
  -- The next tick not yet handled; null when there is none left.
  next_run_at     timestamptz,
  -- A worker handles the due tick until then.
  claimed_until   timestamptz,
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  updated_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  CHECK ((cron IS NOT NULL)::int + (every_ms IS NOT NULL)::int + (at IS NOT NULL)::int = 1)
);
CREATE INDEX IF NOT EXISTS schedules_user_ordinal ON schedules (user_id, ordinal DESC);
CREATE INDEX IF NOT EXISTS schedules_due ON schedules (next_run_at) WHERE enabled AND next_run_at IS NOT NULL;

CREATE TABLE IF NOT EXISTS schedule_runs (
  id              text PRIMARY KEY,
  ordinal         bigserial NOT NULL UNIQUE,
  schedule_id     text NOT NULL REFERENCES schedules(id) ON DELETE CASCADE,
  scheduled_for   timestamptz NOT NULL,
  started_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  status          text NOT NULL CHECK (status IN ('started', 'skipped', 'refused')),
  turn_id         text,
  conversation_id text,
  reason          text,
  -- The idempotency key of a tick: its schedule and its time.
  UNIQUE (schedule_id, scheduled_for)
);
CREATE INDEX IF NOT EXISTS schedule_runs_schedule_ordinal ON schedule_runs (schedule_id, ordinal DESC);
