import type { RedisClient } from '../redis/redis-connection';

const cancelChannel = (prefix: string) => `${prefix}:turn-cancel`;

/**
 * Tells every worker process that a turn has ended from outside (cancelled, interrupted,
 * failed for good), so that each stops the jobs it runs for it. Published after the end is
 * committed: a job that starts later finds the turn or its call settled and does nothing.
 */
export async function publishTurnCancel(redis: RedisClient, prefix: string, turnId: string): Promise<void> {
  await redis.publish(cancelChannel(prefix), turnId);
}

/**
 * One per worker process: the turn ids its jobs work for, each with the abort of every job
 * (turn and tool jobs alike), and one subscription to the cancel channel that aborts them.
 * Pub/sub is at-most-once: a turn job that misses a signal is still stopped by the event fence
 * of the turn's final event; a tool job runs to its end and its result is discarded.
 */
export class TurnCancellations {
  private readonly running = new Map<string, Set<() => void>>();

  private constructor(
    private readonly subscriber: RedisClient,
    private readonly channel: string,
  ) {}

  /** Subscribes `subscriber` (a connection in subscriber mode) to the cancel channel of `prefix`. */
  static async subscribe(subscriber: RedisClient, prefix: string): Promise<TurnCancellations> {
    const cancellations = new TurnCancellations(subscriber, cancelChannel(prefix));
    subscriber.on('message', cancellations.onMessage);
    await subscriber.subscribe(cancellations.channel);
    return cancellations;
  }

  /** Registers the abort of a job working for `turnId`; call the returned function when the job ends. */
  register(turnId: string, abort: () => void): () => void {
    const aborts = this.running.get(turnId) ?? new Set();
    aborts.add(abort);
    this.running.set(turnId, aborts);
    return () => {
      aborts.delete(abort);
      if (aborts.size === 0 && this.running.get(turnId) === aborts) this.running.delete(turnId);
    };
  }

  /** Aborts every job registered here for the turn. */
  cancel(turnId: string): void {
    for (const abort of this.running.get(turnId) ?? []) abort();
  }

  private readonly onMessage = (channel: string, turnId: string) => {
    if (channel === this.channel) this.cancel(turnId);
  };

  /** Not awaited: a subscriber waits out a Redis outage, and a closing process must not. */
  close(): void {
    this.subscriber.off('message', this.onMessage);
    this.subscriber.unsubscribe(this.channel).catch(() => undefined);
  }
}
