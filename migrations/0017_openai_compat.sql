-- OpenAI-compatible routes (docs/API.md, "OpenAI-compatible routes"): files, the OpenAI view of
-- a batch, and responses. Each is its user's; each goes with its user (and a response with its
-- conversation: "kept as long as their conversation").

-- A file's bytes are stored in chunks of at most 1 MiB, written in the transaction that makes the
-- file row, so that no file is ever held whole in memory and none exists half-written.
CREATE TABLE IF NOT EXISTS openai_files (
  id          text PRIMARY KEY,
  ordinal     bigserial NOT NULL UNIQUE,
  user_id     text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  -- 'batch' (uploaded), 'batch_output' (a batch's output and error files).
  purpose     text NOT NULL,
  filename    text NOT NULL,
  bytes       bigint NOT NULL,
  created_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS openai_files_user ON openai_files (user_id, ordinal);

CREATE TABLE IF NOT EXISTS openai_file_chunks (
  file_id   text NOT NULL REFERENCES openai_files(id) ON DELETE CASCADE,
  position  int NOT NULL,
  data      bytea NOT NULL,
  PRIMARY KEY (file_id, position)
);

-- What an OpenAI batch adds to the Switchyard batch it runs as (same id). A batch whose input
-- file was refused has no Switchyard batch: it is `failed` with its `errors`.
CREATE TABLE IF NOT EXISTS openai_batches (
  id                text PRIMARY KEY,
  ordinal           bigserial NOT NULL UNIQUE,
  user_id           text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  batch_id          text REFERENCES batches(id) ON DELETE CASCADE,
  input_file_id     text NOT NULL,
  endpoint          text NOT NULL,
  completion_window text NOT NULL,
  metadata          jsonb,
  errors            jsonb,
  -- Written once the Switchyard batch has ended (OpenAI's `finalizing`), in one transaction.
  output_file_id    text,
  error_file_id     text,
  finalized_at      timestamptz,
  created_at        timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX IF NOT EXISTS openai_batches_user ON openai_batches (user_id, ordinal);

-- A response is one turn. Its stream is read from the conversation's event log after
-- `after_seq` (the conversation's latest seq when the response was made), so that a resume reads
-- only this turn's part of the log.
CREATE TABLE IF NOT EXISTS openai_responses (
  id                    text PRIMARY KEY,
  user_id               text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  conversation_id       text NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  turn_id               text NOT NULL UNIQUE REFERENCES turns(id) ON DELETE CASCADE,
  previous_response_id  text,
  after_seq             bigint NOT NULL,
  -- What the request asked, echoed in the response object: model, instructions, tools,
  -- tool_choice, metadata, background.
  request               jsonb NOT NULL,
  created_at            timestamptz NOT NULL DEFAULT clock_timestamp()
);
