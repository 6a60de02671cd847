-- Conversations made by /openai/v1 (Responses, Chat Completions, the Conversations API) are kept
-- OPENAI_RETENTION_DAYS after their last turn, as OpenAI keeps responses, then deleted; the
-- others are kept until deleted. The sweep reads the retained ones through their own index.
ALTER TABLE conversations ADD COLUMN IF NOT EXISTS openai_retained boolean NOT NULL DEFAULT false;
UPDATE conversations SET openai_retained = true WHERE metadata->>'openai' IN ('responses', 'chat.completions') AND NOT openai_retained;
CREATE INDEX IF NOT EXISTS conversations_openai_retained ON conversations (updated_at) WHERE openai_retained;

-- Deleting a conversation deletes its turns, but the usage ledger keeps its rows: a provider
-- call names its turn without holding it (the turn id stays, for the ledger's grouping).
ALTER TABLE provider_calls DROP CONSTRAINT IF EXISTS provider_calls_turn_id_fkey;
