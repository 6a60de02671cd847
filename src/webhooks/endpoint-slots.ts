/** A taken slot: give it back once the attempt is over, however it ended. */
export type ReleaseSlot = () => void;

/**
 * Attempts in flight per endpoint in this process, at most `maxPerEndpoint` each. Without it one
 * endpoint that never answers, fed by a busy user, would hold every one of the worker's
 * WEBHOOK_CONCURRENCY slots for up to WEBHOOK_TIMEOUT_MS each, and every other user's webhooks
 * would wait behind it. Per process, not across workers: each worker's slots are its own.
 */
export class EndpointSlots {
  private readonly inFlight = new Map<string, number>();

  constructor(private readonly maxPerEndpoint: number) {}

  /** A slot for an attempt to the endpoint, or null when it already has `maxPerEndpoint` in flight. */
  take(endpointId: string): ReleaseSlot | null {
    const taken = this.inFlight.get(endpointId) ?? 0;
    if (taken >= this.maxPerEndpoint) return null;
    this.inFlight.set(endpointId, taken + 1);
    let released = false;
    return () => {
      // Twice would free a slot another attempt holds.
      if (released) return;
      released = true;
      const left = (this.inFlight.get(endpointId) ?? 1) - 1;
      // An idle endpoint keeps no entry: the map stays as small as the endpoints in flight.
      if (left === 0) this.inFlight.delete(endpointId);
      else this.inFlight.set(endpointId, left);
    };
  }
}
