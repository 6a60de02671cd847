/** A taken slot: give it back once the request is over, however it ended (twice frees it once). */
export type ReleaseSlot = () => void;

/**
 * A provider's `maxConcurrency` in one worker process: at most `max` requests in flight, and a
 * step past it waits for a slot, first come first served (a wait is not a failure). Without a
 * `max`, every take is granted at once.
 */
export class ProviderSlots {
  private inUse = 0;
  private readonly waiting: { grant: () => void }[] = [];

  constructor(readonly max?: number) {}

  get held(): number {
    return this.inUse;
  }

  /** Resolves with the slot's release once one is free; rejects with the signal's reason if it aborts first. */
  take(signal: AbortSignal): Promise<ReleaseSlot> {
    if (signal.aborted) return Promise.reject(signal.reason);
    if (this.max === undefined || this.inUse < this.max) return Promise.resolve(this.grant());
    return new Promise((resolve, reject) => {
      const waiter = {
        grant: () => {
          signal.removeEventListener('abort', onAbort);
          resolve(this.grant());
        },
      };
      const onAbort = () => {
        this.waiting.splice(this.waiting.indexOf(waiter), 1);
        reject(signal.reason);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting.push(waiter);
    });
  }

  private grant(): ReleaseSlot {
    this.inUse++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.inUse--;
      // The slot goes straight to the next in line, counted again by its grant.
      this.waiting.shift()?.grant();
    };
  }
}
