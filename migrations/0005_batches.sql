-- Batches (docs/API.md, "Batches"): many conversations run through the same machinery as
-- interactive turns. A batch and its items are stored whole in one transaction, so a batch
-- exists entirely or not at all, and survives any process.
CREATE TABLE IF NOT EXISTS batches (
  id              text PRIMARY KEY,
  -- Creation order, for listing (timestamps tie on PGlite's coarse clock).
  ordinal         bigserial NOT NULL UNIQUE,
  user_id         text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  -- queued | running | completed | cancelling | cancelled
  status          text NOT NULL DEFAULT 'queued',
  concurrency     integer NOT NULL,
  priority        integer NOT NULL,
  metadata        jsonb,
  total           integer NOT NULL,
  -- Lines refused under skipInvalid: [{line, message}].
  skipped         jsonb NOT NULL DEFAULT '[]',
  idempotency_key text,
  request_hash    text NOT NULL,
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  started_at      timestamptz,
  finished_at     timestamptz
);
CREATE INDEX IF NOT EXISTS batches_user_ordinal ON batches (user_id, ordinal DESC);
CREATE UNIQUE INDEX IF NOT EXISTS batches_user_idempotency ON batches (user_id, idempotency_key) WHERE idempotency_key IS NOT NULL;

CREATE TABLE IF NOT EXISTS batch_items (
  batch_id        text NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
  -- 0-based position among the batch's items, the order of its results.
  position        integer NOT NULL,
  -- The item's 1-based line (JSONL) or position (JSON) in the submission.
  line            integer NOT NULL,
  custom_id       text,
  -- messages, system, model, tools, toolChoice, maxSteps, metadata (defaults applied).
  spec            jsonb NOT NULL,
  -- queued | running | succeeded | failed | cancelled
  status          text NOT NULL DEFAULT 'queued',
  -- Runs of the item so far (a retry runs it again in a new conversation).
  run             integer NOT NULL DEFAULT 0,
  conversation_id text,
  -- Which user message of `spec.messages` the item's current turn answers.
  message_index   integer NOT NULL DEFAULT 0,
  -- The ended item: {text, toolCalls, usage, error?}.
  result          jsonb,
  started_at      timestamptz,
  finished_at     timestamptz,
  PRIMARY KEY (batch_id, position)
);
CREATE INDEX IF NOT EXISTS batch_items_batch_status ON batch_items (batch_id, status, position);
CREATE INDEX IF NOT EXISTS batch_items_conversation ON batch_items (conversation_id) WHERE conversation_id IS NOT NULL;
