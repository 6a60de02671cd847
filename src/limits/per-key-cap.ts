/** A taken place: give it back once what took it is over, however it ended (twice frees it once). */
export type Release = () => void;

/**
 * At most `maxPerKey` of something at once per key, in this process: websockets per API key
 * (WS_MAX_CONNECTIONS_PER_KEY), webhook attempts per endpoint (WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT).
 * Counted per process, as what it counts lives in one. Pure bookkeeping.
 */
export class PerKeyCap {
  private readonly held = new Map<string, number>();

  constructor(readonly maxPerKey: number) {}

  /** A place for one more of the key, as its release; null when the key has `maxPerKey` already. */
  take(key: string): Release | null {
    const count = this.held.get(key) ?? 0;
    if (count >= this.maxPerKey) return null;
    this.held.set(key, count + 1);
    let released = false;
    return () => {
      // Twice would free a place another holder has.
      if (released) return;
      released = true;
      const left = (this.held.get(key) ?? 1) - 1;
      // An idle key keeps no entry: the map stays as small as the keys in use.
      if (left > 0) this.held.set(key, left);
      else this.held.delete(key);
    };
  }

  countOf(key: string): number {
    return this.held.get(key) ?? 0;
  }
}
