-- The events that announce a turn's end (the final step's step-finish, then turn-finish,
-- turn-error or turn-cancelled), committed with the end: a worker that dies between the commit
-- and the announcement leaves them to the next run of its job, which appends them once.
ALTER TABLE turns ADD COLUMN IF NOT EXISTS end_events jsonb;
