import type { EventBody, EventPayload } from '../events/event';
import { coerceError, isCoded } from '../errors/switchyard-error';
import type { DeltaPacing } from './delta-pacing';
import type { AttemptFence, InflightWrite } from './event-log';

export interface EventAppender {
  /**
   * Appends events of one conversation in order; resolves with the seq of the last one. With a
   * fence, rejects with `AttemptFencedError` once a later attempt of the turn has begun.
   * `inflight` is written with the events, only if they are appended.
   */
  appendBatch(conversationId: string, bodies: EventBody[], fence?: AttemptFence, inflight?: InflightWrite): Promise<number>;
  /** When set, deltas that follow deltas gather for as long as it says before they are appended. */
  readonly deltaPacing?: DeltaPacing;
}

/** A worker's events carry its attempt; `onFenced` is told when a later attempt took over. */
export interface EventFence {
  attempt: number;
  onFenced?(): void;
}

/** A merged delta stays below this, so no single event grows without bound. */
const MAX_MERGED_DELTA = 16 * 1024;

/**
 * Emits the events of one turn without awaiting each write. One batch is in flight at a time:
 * the first event goes out at once, and whatever is emitted while a batch is on its way goes
 * in the next one, with consecutive deltas of the same kind merged. Under light load every
 * token is its own event; under heavy load a round trip carries many tokens (never one Redis
 * write per token). With many answers streaming in the process, deltas that follow an append
 * of deltas also wait for the log's {@link DeltaPacing} interval; the first delta of a run
 * of deltas, and any other event, go at once. `flush()` is awaited only where order against
 * PostgreSQL matters (commits come before their announcements).
 */
export class TurnEvents {
  private queue: EventBody[] = [];
  private inFlight: Promise<void> | null = null;
  /** Set while deltas wait for their pacing interval; nothing else is sent meanwhile. */
  private paced: NodeJS.Timeout | null = null;
  /** When the last batch was sent, if it ended with a delta: deltas after it may wait their interval from then. */
  private deltasSentAt: number | undefined;
  private failure: Error | undefined;
  private latestSeq = 0;
  private pendingInflight: Omit<InflightWrite, 'turnId'> | undefined;

  constructor(
    private readonly log: EventAppender,
    readonly conversationId: string,
    readonly turnId: string,
    private readonly fence?: EventFence,
  ) {}

  /** Several payloads in one call go out in one batch (a turn's end is appended whole or not at all). */
  emit(...payloads: EventPayload[]): void {
    if (payloads.length === 0) return;
    for (const payload of payloads) {
      const body = { ...payload, conversationId: this.conversationId, turnId: this.turnId } as EventBody;
      const last = this.queue[this.queue.length - 1];
      if (!(last && mergeInto(last, body))) this.queue.push(body);
    }
    if (this.inFlight) return;
    if (!this.paced) this.sendOrPace();
    else if (!payloads.every(isDelta)) this.sendPaced();
  }

  /**
   * The turn's in-flight state, written with the next batch: with the events emitted right after
   * it (the output it describes), or alone when none follow. A later call before that batch
   * replaces it.
   */
  setInflight(value: string, ttlSeconds: number): void {
    this.pend({ value, ttlSeconds });
  }

  /** Deletes the turn's in-flight state with the next batch (the announcement that ends its step). */
  clearInflight(): void {
    this.pend({ value: null, ttlSeconds: 0 });
  }

  private pend(write: Omit<InflightWrite, 'turnId'>): void {
    this.pendingInflight = write;
    if (!this.inFlight && !this.paced) {
      queueMicrotask(() => {
        if (!this.inFlight && !this.paced && this.pendingInflight) this.sendQueued();
      });
    }
  }

  /** Waits for every emitted event (and in-flight state) to be in the log; returns the latest seq. */
  async flush(): Promise<number> {
    for (;;) {
      if (this.paced) this.sendPaced();
      else if (!this.inFlight && this.pendingInflight) this.sendQueued();
      if (!this.inFlight) break;
      await this.inFlight;
    }
    if (this.failure) {
      const failure = this.failure;
      this.failure = undefined;
      throw failure;
    }
    return this.latestSeq;
  }

  private sendQueued(): void {
    const batch = this.queue;
    this.queue = [];
    const fence = this.fence && { turnId: this.turnId, attempt: this.fence.attempt };
    const inflight = this.pendingInflight && { turnId: this.turnId, ...this.pendingInflight };
    this.pendingInflight = undefined;
    const pacing = this.log.deltaPacing;
    if (pacing && batch.length > 0) {
      const endsWithDelta = isDelta(batch[batch.length - 1]!);
      if (endsWithDelta) pacing.noteStreaming(this.turnId);
      this.deltasSentAt = endsWithDelta ? performance.now() : undefined;
    }
    this.inFlight = this.log.appendBatch(this.conversationId, batch, fence, inflight).then(
      (seq) => {
        this.latestSeq = Math.max(this.latestSeq, seq);
        this.next();
      },
      (error: unknown) => {
        if (isCoded(error, 'attempt_fenced')) this.fence?.onFenced?.();
        this.failure ??= coerceError(error);
        this.next();
      },
    );
  }

  private next(): void {
    this.inFlight = null;
    if (this.queue.length > 0 || this.pendingInflight) this.sendOrPace();
  }

  /** Sends what is queued now, unless it is deltas following deltas sent less than the pacing interval ago. */
  private sendOrPace(): void {
    const interval = this.deltasSentAt === undefined || !this.queue.every(isDelta) ? 0 : (this.log.deltaPacing?.intervalMs() ?? 0);
    const wait = interval - (performance.now() - (this.deltasSentAt ?? 0));
    if (interval === 0 || wait < 1) return this.sendQueued();
    this.paced = setTimeout(() => this.sendPaced(), wait);
  }

  private sendPaced(): void {
    clearTimeout(this.paced!);
    this.paced = null;
    this.sendQueued();
  }
}

function isDelta(body: { type: string }): boolean {
  return body.type === 'text-delta' || body.type === 'reasoning-delta' || body.type === 'tool-call-delta';
}

/** Appends `next` to `last` when both are deltas of the same stream; true when merged. */
function mergeInto(last: EventBody, next: EventBody): boolean {
  if ((last.type === 'text-delta' && next.type === 'text-delta') || (last.type === 'reasoning-delta' && next.type === 'reasoning-delta')) {
    if (last.delta.length + next.delta.length > MAX_MERGED_DELTA) return false;
    last.delta += next.delta;
    return true;
  }
  if (last.type === 'tool-call-delta' && next.type === 'tool-call-delta' && last.toolCallId === next.toolCallId) {
    if (last.argsTextDelta.length + next.argsTextDelta.length > MAX_MERGED_DELTA) return false;
    last.argsTextDelta += next.argsTextDelta;
    return true;
  }
  return false;
}
