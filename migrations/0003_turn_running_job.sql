-- While running: the queue job running it. Another job finding the turn running leaves it
-- alone (that job is alive, or comes back as stalled and takes a new attempt); the reconciler
-- clears it when no job of the turn is left.
-- IF NOT EXISTS: databases made before migrations were checksummed got this column from an
-- edited 0001_init.sql.
ALTER TABLE turns ADD COLUMN IF NOT EXISTS running_job text;
