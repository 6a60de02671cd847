import { createHash } from 'node:crypto';

/**
 * Counts how often the same conversation arrives, for `attempts` steps: a client retrying a
 * failed request sends the same messages again. Bounded, forgetting the least recently seen
 * conversation first, because a long-running server sees an unbounded number of them.
 */
export class ArrivalCounter {
  private readonly counts = new Map<string, number>();

  /** @param maxConversations conversations remembered. Default 10,000. */
  constructor(private readonly maxConversations = 10_000) {}

  /** 0 the first time these messages arrive, 1 the second time, and so on. */
  next(messages: readonly unknown[]): number {
    const key = createHash('sha256').update(JSON.stringify(messages)).digest('base64');
    const seen = this.counts.get(key) ?? 0;
    // Re-inserted so that Map order is least recently seen first.
    this.counts.delete(key);
    this.counts.set(key, seen + 1);
    if (this.counts.size > this.maxConversations) this.counts.delete(this.counts.keys().next().value!);
    return seen;
  }
}
