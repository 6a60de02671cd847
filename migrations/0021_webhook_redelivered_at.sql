-- A redelivery starts the delivery's retries afresh: its window (WEBHOOK_RETRY_FOR_MS) runs from
-- the redeliver, not from the event, or an event older than the window (an outage the receiver
-- has just come back from) would be given a single attempt. Null until redelivered: the window
-- then runs from the event (created_at).
ALTER TABLE webhook_deliveries ADD COLUMN IF NOT EXISTS redelivered_at timestamptz;
