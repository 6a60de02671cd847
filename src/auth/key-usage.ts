import { LRUCache } from 'lru-cache';

/** Keys remembered at once; past it the least recently used may be written again sooner. */
const MAX_ENTRIES = 10_000;

/**
 * A key's `lastUsedAt`, written at most once per `intervalMs` per key from this process: a
 * figure to the minute costs one write a minute per busy key, not one per request. The write
 * is not awaited (a request never waits for it, nor fails with it); a failed one is reported
 * and forgotten, so the next use tries again.
 */
export class KeyUsage {
  private readonly recent: LRUCache<string, true>;

  constructor(
    private readonly touch: (keyId: string) => Promise<void>,
    private readonly onError: (error: unknown, keyId: string) => void,
    intervalMs = 60_000,
  ) {
    this.recent = new LRUCache({ max: MAX_ENTRIES, ttl: intervalMs });
  }

  used(keyId: string): void {
    if (this.recent.has(keyId)) return;
    this.recent.set(keyId, true);
    this.touch(keyId).catch((error: unknown) => {
      this.recent.delete(keyId);
      this.onError(error, keyId);
    });
  }
}
