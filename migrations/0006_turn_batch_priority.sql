-- A batch item's turn runs at a lower queue priority than interactive turns; this is its
-- batch's priority (0-9, higher first). NULL: an interactive turn.
ALTER TABLE turns ADD COLUMN IF NOT EXISTS batch_priority integer;
