-- Where a conversation was made (docs/API.md, POST /v1/conversations): `api` (POST
-- /v1/conversations), `chat` (/api/chat), `responses` and `chat.completions` (the OpenAI routes),
-- `batch` (a batch item's run), `schedule`. GET /v1/conversations?source= filters on it, so that a
-- person's chats are not buried under every /openai/v1/responses call.
ALTER TABLE conversations ADD COLUMN IF NOT EXISTS source text NOT NULL DEFAULT 'api';

-- The conversations made before: told apart by what their makers wrote. An externalId outside a
-- batch was /api/chat's chat id (or one a REST client chose: those count as chats, as the
-- playground already showed them).
UPDATE conversations SET source = CASE
    WHEN batch_id IS NOT NULL THEN 'batch'
    WHEN metadata->>'openai' = 'responses' THEN 'responses'
    WHEN metadata->>'openai' = 'chat.completions' THEN 'chat.completions'
    WHEN external_id IS NOT NULL THEN 'chat'
    ELSE 'api'
  END;

CREATE INDEX IF NOT EXISTS conversations_user_source_ordinal ON conversations (user_id, source, ordinal DESC);
