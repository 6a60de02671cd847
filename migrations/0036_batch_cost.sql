-- A batch's usage gains its cost: the ledger's sum for its items' conversations, each item's result
-- carrying its own (costUsd beside the tokens), summed onto the batch's row as its tokens are (0009).
ALTER TABLE batches ADD COLUMN IF NOT EXISTS cost_usd numeric NOT NULL DEFAULT 0;

-- As 0009, with the cost.
CREATE OR REPLACE FUNCTION batch_items_counted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE batches b SET
    queued = b.queued + d.queued, running = b.running + d.running, succeeded = b.succeeded + d.succeeded,
    failed = b.failed + d.failed, cancelled = b.cancelled + d.cancelled,
    prompt_tokens = b.prompt_tokens + d.prompt_tokens, completion_tokens = b.completion_tokens + d.completion_tokens,
    total_tokens = b.total_tokens + d.total_tokens, cost_usd = b.cost_usd + d.cost_usd
  FROM (
    SELECT batch_id,
      COALESCE(SUM(n) FILTER (WHERE status = 'queued'), 0) AS queued,
      COALESCE(SUM(n) FILTER (WHERE status = 'running'), 0) AS running,
      COALESCE(SUM(n) FILTER (WHERE status = 'succeeded'), 0) AS succeeded,
      COALESCE(SUM(n) FILTER (WHERE status = 'failed'), 0) AS failed,
      COALESCE(SUM(n) FILTER (WHERE status = 'cancelled'), 0) AS cancelled,
      COALESCE(SUM(n * (result->'usage'->>'promptTokens')::bigint), 0) AS prompt_tokens,
      COALESCE(SUM(n * (result->'usage'->>'completionTokens')::bigint), 0) AS completion_tokens,
      COALESCE(SUM(n * (result->'usage'->>'totalTokens')::bigint), 0) AS total_tokens,
      -- Results written before this migration have no cost: they add 0.
      COALESCE(SUM(n * COALESCE((result->'usage'->>'costUsd')::numeric, 0)), 0) AS cost_usd
    FROM (
      SELECT batch_id, status, 1 AS n, result FROM new_rows
      UNION ALL
      SELECT batch_id, status, -1 AS n, result FROM old_rows
    ) changes
    GROUP BY batch_id
  ) d
  WHERE b.id = d.batch_id
    AND (d.queued <> 0 OR d.running <> 0 OR d.succeeded <> 0 OR d.failed <> 0 OR d.cancelled <> 0
      OR d.prompt_tokens <> 0 OR d.completion_tokens <> 0 OR d.total_tokens <> 0 OR d.cost_usd <> 0);
  RETURN NULL;
END $$;

-- As 0016, with the cost.
CREATE OR REPLACE FUNCTION batch_webhook_event() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE user_id = NEW.user_id AND disabled_at IS NULL) THEN
    RETURN NULL;
  END IF;
  PERFORM record_webhook_event(NEW.user_id, 'batch.' || NEW.status, jsonb_build_object(
    'batchId', NEW.id, 'status', NEW.status,
    'counts', jsonb_build_object('total', NEW.total, 'queued', NEW.queued, 'running', NEW.running,
      'succeeded', NEW.succeeded, 'failed', NEW.failed, 'cancelled', NEW.cancelled),
    'usage', jsonb_build_object('promptTokens', NEW.prompt_tokens, 'completionTokens', NEW.completion_tokens, 'totalTokens', NEW.total_tokens,
      'costUsd', NEW.cost_usd::float8)));
  RETURN NULL;
END $$;
