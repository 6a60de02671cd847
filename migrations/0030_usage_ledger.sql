-- The usage ledger is provider_calls: one row per request a provider answered (or was cut off
-- in), under the request's own id, so a row written again by a retried job or a later attempt
-- is the same row. Tokens are columns so that usage and budgets are sums PostgreSQL indexes.
ALTER TABLE provider_calls
  ADD COLUMN IF NOT EXISTS user_id text,
  ADD COLUMN IF NOT EXISTS conversation_id text,
  ADD COLUMN IF NOT EXISTS prompt_tokens integer NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS cached_prompt_tokens integer NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS completion_tokens integer NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS reasoning_tokens integer NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS cost_usd numeric NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS priced boolean NOT NULL DEFAULT false,
  ADD COLUMN IF NOT EXISTS estimated boolean NOT NULL DEFAULT false,
  ADD COLUMN IF NOT EXISTS total_tokens integer GENERATED ALWAYS AS (prompt_tokens + completion_tokens) STORED;

-- Rows written before this migration: their tokens from their usage, their owner from their turn.
UPDATE provider_calls AS p
   SET user_id = t.user_id,
       conversation_id = t.conversation_id,
       prompt_tokens = COALESCE((p.usage->>'promptTokens')::integer, 0),
       completion_tokens = COALESCE((p.usage->>'completionTokens')::integer, 0)
  FROM turns AS t
 WHERE t.id = p.turn_id AND p.user_id IS NULL;

CREATE INDEX IF NOT EXISTS provider_calls_user_time ON provider_calls (user_id, started_at);
CREATE INDEX IF NOT EXISTS provider_calls_time ON provider_calls (started_at);
