-- A batch's counts and usage kept on its row, so that its status and progress (read up to 4
-- times a second per follower) cost one row read, not a pass over its items: a statement that
-- changes items adds what it changed to their batches' rows, in its own transaction.
ALTER TABLE batches
  ADD COLUMN IF NOT EXISTS queued integer NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS running integer NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS succeeded integer NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS failed integer NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS cancelled integer NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS prompt_tokens bigint NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS completion_tokens bigint NOT NULL DEFAULT 0,
  ADD COLUMN IF NOT EXISTS total_tokens bigint NOT NULL DEFAULT 0;

UPDATE batches b SET
  queued = c.queued, running = c.running, succeeded = c.succeeded, failed = c.failed, cancelled = c.cancelled,
  prompt_tokens = c.prompt_tokens, completion_tokens = c.completion_tokens, total_tokens = c.total_tokens
FROM (
  SELECT batch_id,
    count(*) FILTER (WHERE status = 'queued') AS queued,
    count(*) FILTER (WHERE status = 'running') AS running,
    count(*) FILTER (WHERE status = 'succeeded') AS succeeded,
    count(*) FILTER (WHERE status = 'failed') AS failed,
    count(*) FILTER (WHERE status = 'cancelled') AS cancelled,
    COALESCE(SUM((result->'usage'->>'promptTokens')::bigint), 0) AS prompt_tokens,
    COALESCE(SUM((result->'usage'->>'completionTokens')::bigint), 0) AS completion_tokens,
    COALESCE(SUM((result->'usage'->>'totalTokens')::bigint), 0) AS total_tokens
  FROM batch_items GROUP BY batch_id
) c
WHERE b.id = c.batch_id;

-- Items are inserted queued (the batch's row starts with queued = total); after that every
-- statement that updates items adds, per batch, each row as it is now (+1) and as it was (-1).
-- Batches whose figures did not change (an item moving to its next message) are not touched.
CREATE OR REPLACE FUNCTION batch_items_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE batches b SET
    queued = b.queued + d.queued, running = b.running + d.running, succeeded = b.succeeded + d.succeeded,
    failed = b.failed + d.failed, cancelled = b.cancelled + d.cancelled,
    prompt_tokens = b.prompt_tokens + d.prompt_tokens, completion_tokens = b.completion_tokens + d.completion_tokens,
    total_tokens = b.total_tokens + d.total_tokens
  FROM (
    SELECT batch_id,
      COALESCE(SUM(n) FILTER (WHERE status = 'queued'), 0) AS queued,
      COALESCE(SUM(n) FILTER (WHERE status = 'running'), 0) AS running,
      COALESCE(SUM(n) FILTER (WHERE status = 'succeeded'), 0) AS succeeded,
      COALESCE(SUM(n) FILTER (WHERE status = 'failed'), 0) AS failed,
      COALESCE(SUM(n) FILTER (WHERE status = 'cancelled'), 0) AS cancelled,
      COALESCE(SUM(n * (result->'usage'->>'promptTokens')::bigint), 0) AS prompt_tokens,
      COALESCE(SUM(n * (result->'usage'->>'completionTokens')::bigint), 0) AS completion_tokens,
      COALESCE(SUM(n * (result->'usage'->>'totalTokens')::bigint), 0) AS total_tokens
    FROM (
      SELECT batch_id, status, 1 AS n, result FROM new_rows
      UNION ALL
      SELECT batch_id, status, -1 AS n, result FROM old_rows
    ) changes
    GROUP BY batch_id
  ) d
  WHERE b.id = d.batch_id
    AND (d.queued <> 0 OR d.running <> 0 OR d.succeeded <> 0 OR d.failed <> 0 OR d.cancelled <> 0
      OR d.prompt_tokens <> 0 OR d.completion_tokens <> 0 OR d.total_tokens <> 0);
  RETURN NULL;
END $$;

DROP TRIGGER IF EXISTS batch_items_counted ON batch_items;
CREATE TRIGGER batch_items_counted AFTER UPDATE ON batch_items
  REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows
  FOR EACH STATEMENT EXECUTE FUNCTION batch_items_counted();
