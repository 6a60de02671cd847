-- Recording a delivery wakes the relays (src/webhooks/webhook-relay.ts) at the commit that ends
-- the turn or the batch, instead of leaving the event to their next poll (up to
-- WEBHOOK_RELAY_INTERVAL_MS while they are idle). The channel is the schema's own, so deployments
-- and tests sharing a database wake only their own relays (names stop at 63 bytes: 20 + 32 here;
-- src/store/webhook-wakeup-channel.ts names it the same way). PostgreSQL sends a transaction's
-- notifications at its commit (none if it rolls back), each channel and payload once however
-- many deliveries it recorded. Only the first delivery waiting for a relay notifies: PostgreSQL
-- serializes the commits of notifying transactions across the database (a lock held to the end of
-- the commit), and while deliveries wait a relay has been woken already and, having found work,
-- looks again within 100 ms. Otherwise as in 0016.
CREATE OR REPLACE FUNCTION record_webhook_event(p_user_id text, p_type text, p_data jsonb) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
  v_event_id text := 'evt_' || replace(gen_random_uuid()::text, '-', '');
  v_created timestamptz := clock_timestamp();
BEGIN
  INSERT INTO webhook_deliveries (id, endpoint_id, event_id, type, payload, next_attempt_at, created_at)
  SELECT 'whd_' || replace(gen_random_uuid()::text, '-', ''), e.id, v_event_id, p_type,
    jsonb_build_object('id', v_event_id, 'type', p_type,
      'createdAt', to_char(v_created AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'), 'data', p_data),
    v_created, v_created
  FROM webhook_endpoints e
  WHERE e.user_id = p_user_id AND e.disabled_at IS NULL AND (p_type = ANY (e.events) OR '*' = ANY (e.events));
  IF FOUND AND NOT EXISTS (
    SELECT 1 FROM webhook_deliveries WHERE status = 'pending' AND enqueued_at IS NULL AND created_at < v_created
  ) THEN
    PERFORM pg_notify('switchyard_webhooks_' || md5(current_schema()), '');
  END IF;
END $$;
