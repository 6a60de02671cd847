import type { Metrics } from '../metrics/metrics';
import type { ChannelListener } from '../store/db';

/**
 * `listener`, with the listening connection's state shown on /metrics under `name`: the
 * connection is outside the pool's figures, and while it is down its listener falls back to
 * polling, which nothing else shows.
 */
export function meteredChannelListener(listener: ChannelListener, metrics: Metrics, name: string): ChannelListener {
  const labels = { listener: name };
  // Down until it listens: a connection that never opens shows as 0, not as no series.
  metrics.dbListenerConnected.set(labels, 0);
  metrics.dbListenerLosses.inc(labels, 0);
  return {
    notified: () => listener.notified(),
    listening() {
      metrics.dbListenerConnected.set(labels, 1);
      listener.listening();
    },
    lost(error) {
      metrics.dbListenerConnected.set(labels, 0);
      metrics.dbListenerLosses.inc(labels);
      listener.lost(error);
    },
  };
}
