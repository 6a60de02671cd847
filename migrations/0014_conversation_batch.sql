-- The batch whose item a conversation runs (null: a person's own conversation, made over
-- /api/chat or POST /v1/conversations). Kept on the conversation rather than read from
-- batch_items, which references only an item's latest run: a retried item's earlier
-- conversations are batch items too. Lists of a user's chats (`GET /v1/conversations?batch=false`)
-- read the partial index, never the user's batch items.
ALTER TABLE conversations ADD COLUMN batch_id text REFERENCES batches(id);

-- The batch runner names an item's conversation `batch:<batchId>:<position>:<run>`.
UPDATE conversations c SET batch_id = b.id
  FROM batches b
 WHERE c.external_id LIKE 'batch:%' AND b.id = split_part(c.external_id, ':', 2) AND b.user_id = c.user_id;

CREATE INDEX conversations_user_chat_ordinal ON conversations (user_id, ordinal DESC) WHERE batch_id IS NULL;
CREATE INDEX conversations_user_batch_ordinal ON conversations (user_id, ordinal DESC) WHERE batch_id IS NOT NULL;
