-- Users and their API keys. Keys are high-entropy random strings, so a plain SHA-256 is
-- enough to store them (no slow hash needed); the plaintext is shown once at creation.
CREATE TABLE users (
  id          text PRIMARY KEY,
  name        text NOT NULL,
  -- null: every tool; otherwise the only tools this user's turns may offer.
  allowed_tools jsonb,
  created_at  timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
  id          text PRIMARY KEY,
  user_id     text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  key_hash    text NOT NULL UNIQUE,
  -- The first characters of the key, so an operator can tell keys apart.
  prefix      text NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT now(),
  revoked_at  timestamptz
);

CREATE TABLE conversations (
  id          text PRIMARY KEY,
  -- Creation order: timestamps tie (PGlite's clock is coarse), a sequence never does.
  ordinal     bigserial NOT NULL UNIQUE,
  user_id     text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  external_id text,
  title       text,
  system      text,
  model       text,
  tools       jsonb,
  metadata    jsonb,
  -- The latest event seq, kept here too so a Redis that restarts empty cannot reset it.
  last_seq    bigint NOT NULL DEFAULT 0,
  created_at  timestamptz NOT NULL DEFAULT now(),
  updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX conversations_user_ordinal ON conversations (user_id, ordinal DESC);
CREATE UNIQUE INDEX conversations_user_external ON conversations (user_id, external_id) WHERE external_id IS NOT NULL;

CREATE TABLE turns (
  id              text PRIMARY KEY,
  -- Creation order: a conversation's turns run in this order (inserts are serialised by the
  -- conversation's row lock, and a sequence, unlike a timestamp, never ties).
  ordinal         bigserial NOT NULL UNIQUE,
  conversation_id text NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  user_id         text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  -- queued | running | waiting_tools | completed | failed | cancelled
  status          text NOT NULL,
  -- The user message this turn answers, as posted (string or content parts).
  input           jsonb NOT NULL,
  -- Request options: model, tools, toolChoice, maxSteps.
  options         jsonb NOT NULL DEFAULT '{}',
  idempotency_key text,
  -- SHA-256 of the request, to tell a replay from a conflicting reuse of the key.
  request_hash    text,
  -- Every start of the turn's work; fences the writes of a stale worker.
  attempt         integer NOT NULL DEFAULT 0,
  -- Provider failures retried so far (429, 5xx, broken streams); bounded by the retry policy.
  provider_retries integer NOT NULL DEFAULT 0,
  -- The provider failure behind the latest retry: {code, message, at}.
  last_error      jsonb,
  -- While queued after a provider failure: not before this (kept here so that a job Redis lost
  -- and the reconciler re-created still waits out the provider's Retry-After).
  retry_at        timestamptz,
  -- The last committed step (0: none yet).
  step            integer NOT NULL DEFAULT 0,
  -- While waiting_tools: 'tools' (server-run tool jobs are out; their flow resumes the turn)
  -- or 'clients' (only client answers are missing; the last answer resumes it).
  awaiting        text,
  finish_reason   text,
  error           jsonb,
  usage           jsonb NOT NULL DEFAULT '{"promptTokens":0,"completionTokens":0,"totalTokens":0}',
  -- One entry per committed step: {step, finishReason, usage, startedAt, finishedAt}.
  steps           jsonb NOT NULL DEFAULT '[]',
  created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
  started_at      timestamptz,
  finished_at     timestamptz,
  UNIQUE (conversation_id, idempotency_key)
);
CREATE INDEX turns_conversation_active ON turns (conversation_id, ordinal)
  WHERE status IN ('queued', 'running', 'waiting_tools');
CREATE INDEX turns_unfinished ON turns (ordinal) WHERE status IN ('queued', 'running', 'waiting_tools');
CREATE INDEX turns_user_active ON turns (user_id) WHERE status IN ('queued', 'running', 'waiting_tools');

-- Messages of a conversation in order (id grows; one turn runs at a time per conversation).
CREATE TABLE messages (
  id              bigserial PRIMARY KEY,
  conversation_id text NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  turn_id         text REFERENCES turns(id) ON DELETE CASCADE,
  -- The step of the turn that produced an assistant message (0 for the user message).
  step            integer NOT NULL DEFAULT 0,
  role            text NOT NULL,
  content         jsonb,
  tool_calls      jsonb,
  tool_call_id    text,
  created_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX messages_conversation ON messages (conversation_id, id);
-- A step's assistant message and a turn's user message are written once, whatever retries.
CREATE UNIQUE INDEX messages_turn_step_role ON messages (turn_id, step, role) WHERE role IN ('user', 'assistant');
-- One tool message per call of a turn.
CREATE UNIQUE INDEX messages_turn_tool_call ON messages (turn_id, tool_call_id) WHERE role = 'tool';
