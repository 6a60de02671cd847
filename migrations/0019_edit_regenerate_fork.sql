-- Edit, regenerate and fork. Nothing is deleted: a message a later turn replaced keeps its row,
-- marked with the id of the turn that replaced it, and a conversation is the path of its
-- messages that are not marked. A turn whose every message was replaced (or that never wrote
-- one) is marked the same way, so that a history built from turns leaves it out too.
ALTER TABLE messages ADD COLUMN IF NOT EXISTS superseded_by text;
ALTER TABLE turns ADD COLUMN IF NOT EXISTS superseded_by text;

-- A regenerate answers `from_message_id` (a user message) again and writes no user message of
-- its own; an edit replaces it with the turn's input. Null for every other turn.
ALTER TABLE turns ADD COLUMN IF NOT EXISTS branch text;
ALTER TABLE turns ADD COLUMN IF NOT EXISTS from_message_id bigint;

-- The id the AI SDK gave the turn's user message (`/api/chat`), so that a later edit or
-- regenerate naming that id finds the stored message. Turns posted before this column carry it
-- in their idempotency key.
ALTER TABLE turns ADD COLUMN IF NOT EXISTS ui_message_id text;
UPDATE turns SET ui_message_id = substr(idempotency_key, length('ui-message:') + 1)
 WHERE idempotency_key LIKE 'ui-message:%' AND ui_message_id IS NULL;

ALTER TABLE conversations ADD COLUMN IF NOT EXISTS forked_from_conversation_id text;
ALTER TABLE conversations ADD COLUMN IF NOT EXISTS forked_from_message_id bigint;

-- The path is what every turn reads: its index skips the replaced messages, so a conversation
-- with many of them reads its history as fast as one without.
CREATE INDEX IF NOT EXISTS messages_conversation_active ON messages (conversation_id, id) WHERE superseded_by IS NULL;
