-- Long conversations (docs/API.md, "Long conversations"): a conversation's compaction policy, and
-- the summaries that stand in for its earlier messages. Messages never change: a summary names
-- the last message it covers, and a step sends the summary and the messages after it.
ALTER TABLE conversations ADD COLUMN IF NOT EXISTS compaction jsonb;

-- One row per compaction, written in one transaction with its provider call's ledger line and
-- fenced by its turn's attempt. The unique (turn_id, step) keeps one summary per step whatever
-- is retried; a summary whose last message an edit replaced is off the path and not used.
CREATE TABLE IF NOT EXISTS compactions (
  id               text PRIMARY KEY,
  conversation_id  text NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
  turn_id          text NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
  step             integer NOT NULL,
  up_to_message_id bigint NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
  summary          text NOT NULL,
  tokens_before    integer NOT NULL,
  tokens_after     integer NOT NULL,
  model            text NOT NULL,
  usage            jsonb NOT NULL,
  created_at       timestamptz NOT NULL DEFAULT now(),
  UNIQUE (turn_id, step)
);
CREATE INDEX IF NOT EXISTS compactions_conversation ON compactions (conversation_id, up_to_message_id);

-- What a call's request was counted at with the tokenizer, beside what the provider reported:
-- their ratio corrects the next count.
ALTER TABLE provider_calls ADD COLUMN IF NOT EXISTS counted_prompt_tokens integer;
CREATE INDEX IF NOT EXISTS provider_calls_conversation ON provider_calls (conversation_id, started_at);
