import type { RedisClient } from '../redis/redis-connection';
import { inflightStateKey } from './event-log';
import type { TurnEvents } from './turn-events';

export interface InflightSnapshot {
  attempt: number;
  step: number;
  toolCalls: { toolCallId: string; toolName: string; argumentsText: string }[];
  /**
   * The provider call streaming, with its tokens so far: a worker that dies mid-stream leaves it
   * for the next attempt to write to the usage ledger, estimated (as of the marker's last write).
   */
  call?: InflightCall;
}

export interface InflightCall {
  id: string;
  /** A compaction's summary request (docs/API.md, "Long conversations"); absent: the step's own. */
  kind?: 'compaction';
  provider: string;
  model: string;
  startedAt: string;
  promptTokens: number;
  completionTokens: number;
  price?: { input: number; cachedInput: number; output: number };
}

/**
 * What a running step has produced so far, kept in Redis (never in PostgreSQL per token):
 * its in-flight tool-call buffers for `GET /v1/turns/:id`, and the mark that the step sent
 * output, which tells a restarted attempt to announce `attempt-discarded`. Written with the
 * turn's events (see {@link TurnEvents.setInflight}): a worker fenced off writes none, and the
 * announcement that ends the step clears it. Throttled; the key expires on its own.
 */
export class InflightState {
  private lastWrite = 0;
  private pendingTimer: NodeJS.Timeout | undefined;
  private readLatest: (() => InflightSnapshot) | undefined;

  constructor(
    private readonly events: Pick<TurnEvents, 'setInflight' | 'clearInflight'>,
    private readonly throttleMs = 50,
    private readonly ttlSeconds = 3600,
  ) {}

  static async read(redis: RedisClient, prefix: string, turn: { id: string; conversationId: string }): Promise<InflightSnapshot | null> {
    const text = await redis.get(inflightStateKey(prefix, turn.conversationId, turn.id));
    return text ? (JSON.parse(text) as InflightSnapshot) : null;
  }

  /**
   * Records that the step's state changed; `read` gives it when it is written (at most once per
   * throttle period, however many fragments arrive). The first call of a step goes with the
   * next batch of events.
   */
  update(read: () => InflightSnapshot): void {
    this.readLatest = read;
    const now = Date.now();
    if (now - this.lastWrite >= this.throttleMs) {
      this.write();
    } else if (!this.pendingTimer) {
      this.pendingTimer = setTimeout(() => this.write(), this.throttleMs - (now - this.lastWrite));
    }
  }

  /**
   * The step's stream is over: an update still waiting out the throttle is dropped, so that no
   * state is written after the step's end (announced with a clear, or with the turn's end).
   */
  streamEnded(): void {
    this.dropPending();
  }

  /** Deletes the state with the next batch of events (the one that announces why). */
  clear(): void {
    this.dropPending();
    this.readLatest = undefined;
    this.lastWrite = 0;
    this.events.clearInflight();
  }

  private write(): void {
    this.dropPending();
    if (!this.readLatest) return;
    this.lastWrite = Date.now();
    this.events.setInflight(JSON.stringify(this.readLatest()), this.ttlSeconds);
  }

  private dropPending(): void {
    clearTimeout(this.pendingTimer);
    this.pendingTimer = undefined;
  }
}
