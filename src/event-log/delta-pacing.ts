/** Turns that appended deltas within a window of this length count as streaming. */
const WINDOW_MS = 100;

export interface DeltaPacingOptions {
  /** The longest a turn's deltas wait to be appended together, however many answers stream. 0: never wait. */
  maxIntervalMs: number;
  /** What each streaming answer adds to the wait (default 0.2 ms: 100 answers → 20 ms). */
  perStreamMs?: number;
  now?: () => number;
}

/**
 * How long a turn's text deltas gather before they are appended, given how many answers this
 * process streams. Every append is a Redis script call, a published message, a frame per
 * subscriber and their system calls; a turn sends its next batch as soon as the last one is
 * appended, so with many answers streaming the appends of deltas crowd the event loop that
 * also admits, takes and starts new turns. Waiting a few milliseconds per answer in flight
 * turns many small appends into a few larger ones; one answer alone never waits.
 */
export class DeltaPacing {
  private current = new Set<string>();
  private previous = new Set<string>();
  private windowStart: number;
  private readonly now: () => number;
  private readonly perStreamMs: number;

  constructor(private readonly options: DeltaPacingOptions) {
    this.now = options.now ?? (() => performance.now());
    this.perStreamMs = options.perStreamMs ?? 0.2;
    this.windowStart = this.now();
  }

  /** A turn appends deltas: it counts as streaming for the next window. */
  noteStreaming(turnId: string): void {
    this.rotate();
    this.current.add(turnId);
  }

  /** How long a turn waits after an append of deltas before it appends the deltas that followed. */
  intervalMs(): number {
    if (this.options.maxIntervalMs === 0) return 0;
    this.rotate();
    const streams = Math.max(this.current.size, this.previous.size);
    return streams < 2 ? 0 : Math.min(this.options.maxIntervalMs, streams * this.perStreamMs);
  }

  private rotate(): void {
    const at = this.now();
    if (at - this.windowStart < WINDOW_MS) return;
    // A window with no appends at all leaves nothing streaming behind it.
    this.previous = at - this.windowStart < 2 * WINDOW_MS ? this.current : new Set();
    this.current = new Set();
    this.windowStart = at;
  }
}
