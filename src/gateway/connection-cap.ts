/**
 * Open websockets per API key in this process, at most `maxPerKey` (WS_MAX_CONNECTIONS_PER_KEY):
 * a connection takes its place before the upgrade and gives it back when its socket closes.
 * Counted per process, as a connection lives in one; tickets and session tokens count against
 * the key they were got with. Pure bookkeeping.
 */
export class ConnectionCap {
  private readonly open = new Map<string, number>();

  constructor(readonly maxPerKey: number) {}

  /** A place for one more connection of the key, as its release (idempotent); null when the key has `maxPerKey` open. */
  take(keyId: string): (() => void) | null {
    const count = this.open.get(keyId) ?? 0;
    if (count >= this.maxPerKey) return null;
    this.open.set(keyId, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.open.get(keyId) ?? 1) - 1;
      if (left > 0) this.open.set(keyId, left);
      else this.open.delete(keyId);
    };
  }

  countOf(keyId: string): number {
    return this.open.get(keyId) ?? 0;
  }
}
