import type { RedisClient } from '../runtime/redis-connection';

export interface InflightSnapshot {
  attempt: number;
  step: number;
  toolCalls: { toolCallId: string; toolName: string; argumentsText: string }[];
}

/**
 * What a running step has produced so far, kept in Redis (never in PostgreSQL per token):
 * its in-flight tool-call buffers for `GET /v1/turns/:id`, and the mark that the step sent
 * output, which tells a restarted attempt to announce `attempt-discarded`.
 * Writes are fire-and-forget and throttled; the key expires on its own.
 */
export class InflightState {
  private lastWrite = 0;
  private pendingTimer: NodeJS.Timeout | undefined;
  private latest: InflightSnapshot | undefined;

  constructor(
    private readonly redis: RedisClient,
    private readonly key: string,
    private readonly throttleMs = 50,
    private readonly ttlSeconds = 3600,
  ) {}

  static keyFor(prefix: string, turnId: string): string {
    return `${prefix}:turn:${turnId}:inflight`;
  }

  static async read(redis: RedisClient, key: string): Promise<InflightSnapshot | null> {
    const text = await redis.get(key);
    return text ? (JSON.parse(text) as InflightSnapshot) : null;
  }

  /** Records the step's state; the first call of a step is written at once. */
  update(snapshot: InflightSnapshot): void {
    this.latest = snapshot;
    const now = Date.now();
    if (now - this.lastWrite >= this.throttleMs) {
      this.write();
    } else if (!this.pendingTimer) {
      this.pendingTimer = setTimeout(() => this.write(), this.throttleMs - (now - this.lastWrite));
    }
  }

  async clear(): Promise<void> {
    clearTimeout(this.pendingTimer);
    this.pendingTimer = undefined;
    this.latest = undefined;
    await this.redis.del(this.key);
  }

  private write(): void {
    clearTimeout(this.pendingTimer);
    this.pendingTimer = undefined;
    if (!this.latest) return;
    this.lastWrite = Date.now();
    this.redis.set(this.key, JSON.stringify(this.latest), 'EX', this.ttlSeconds).catch(() => undefined);
  }
}
