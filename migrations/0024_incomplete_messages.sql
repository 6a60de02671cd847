-- What a cancelled or interrupted step had streamed, kept: its text (content, as any assistant
-- message's) and its reasoning, as the turn's last assistant message marked incomplete. Only
-- such messages carry reasoning for now; a completed step's is not stored. A constant default
-- adds the column without rewriting the table.
ALTER TABLE messages ADD COLUMN IF NOT EXISTS incomplete boolean NOT NULL DEFAULT false;
ALTER TABLE messages ADD COLUMN IF NOT EXISTS reasoning text;
