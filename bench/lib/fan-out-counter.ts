import type { TimedWsClient } from './timed-ws-client';

export interface FanOutResult {
  /** The first text-delta at any client → the last text-delta at any client. */
  spanMs: number;
  firstDeltaAt: number;
  lastDeltaAt: number;
  deltaFrames: number;
  /** Clients that ended with less text than the best-served client (or were disconnected). */
  incompleteClients: number;
  disconnectedClients: number;
  /** Characters of text the best-served client received. */
  maxTextChars: number;
}

/**
 * Follows one streamed answer at many clients at once with a few counters per client (no
 * event kept), so that the bench process spends its time reading frames, not bookkeeping.
 */
export class FanOutCounter {
  readonly allFinished: Promise<void>;
  private firstDeltaAt = Number.POSITIVE_INFINITY;
  private lastDeltaAt = 0;
  private deltaFrames = 0;
  private readonly textChars: number[];
  private readonly finished: boolean[];
  private disconnected = 0;

  constructor(clients: TimedWsClient[]) {
    this.textChars = clients.map(() => 0);
    this.finished = clients.map(() => false);
    let remaining = clients.length;
    let resolve: () => void = () => undefined;
    this.allFinished = new Promise((done) => (resolve = done));
    const finish = (index: number) => {
      if (this.finished[index]) return;
      this.finished[index] = true;
      if (--remaining === 0) resolve();
    };
    clients.forEach((client, index) => {
      client.onEvent = (event, receivedAt) => {
        if (event.type === 'text-delta') {
          if (receivedAt < this.firstDeltaAt) this.firstDeltaAt = receivedAt;
          if (receivedAt > this.lastDeltaAt) this.lastDeltaAt = receivedAt;
          this.deltaFrames++;
          this.textChars[index]! += event.delta?.length ?? 0;
        } else if (event.type === 'turn-finish' || event.type === 'turn-error' || event.type === 'turn-cancelled') {
          finish(index);
        }
      };
      client.onClose = () => {
        if (!this.finished[index]) this.disconnected++;
        finish(index);
      };
      if (!client.isOpen) client.onClose();
    });
  }

  result(): FanOutResult {
    const maxTextChars = Math.max(...this.textChars);
    return {
      spanMs: this.lastDeltaAt - this.firstDeltaAt,
      firstDeltaAt: this.firstDeltaAt,
      lastDeltaAt: this.lastDeltaAt,
      deltaFrames: this.deltaFrames,
      incompleteClients: this.textChars.filter((chars) => chars < maxTextChars).length,
      disconnectedClients: this.disconnected,
      maxTextChars,
    };
  }
}
