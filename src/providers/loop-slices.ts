/**
 * Time-slices the reading of answers already streaming in a process, so that a new turn's round
 * trips (its admission, its take, its first provider request) are not queued behind a hundred
 * answers' chunks on the same event loop. A stream asks {@link yieldIfSpent} before each read it
 * processes: within the slice (`sliceMs` since the loop last came round) it goes on; past it, it
 * waits. Each time round the loop (a `setImmediate`, after the loop has polled its I/O), the
 * waiting streams go on one after another, each for one read, until the slice is used up; the
 * rest wait for the next round. One stream alone never uses up a slice, so it never waits.
 */
export class LoopSlices {
  private sliceStartedAt: number | undefined;
  private readonly waiting: (() => void)[] = [];
  private roundArmed = false;

  constructor(
    private readonly sliceMs: number,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Undefined: go on now. A promise: the slice is used up or others wait; go on when it resolves. */
  yieldIfSpent(): Promise<void> | undefined {
    if (this.sliceMs <= 0) return undefined;
    if (this.sliceStartedAt === undefined) {
      this.sliceStartedAt = this.now();
      this.armRound();
      return undefined;
    }
    if (this.waiting.length === 0 && !this.spent()) return undefined;
    this.armRound();
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  private spent(): boolean {
    return this.now() - this.sliceStartedAt! >= this.sliceMs;
  }

  private armRound(): void {
    if (this.roundArmed) return;
    this.roundArmed = true;
    setImmediate(() => this.round());
  }

  /** The loop came round: a new slice, in which the waiting streams go on in turn. */
  private round(): void {
    this.roundArmed = false;
    this.sliceStartedAt = undefined;
    if (this.waiting.length === 0) return;
    this.sliceStartedAt = this.now();
    // What this round leaves goes on in the next.
    this.armRound();
    this.resumeWhileTimeLeft();
  }

  /**
   * Resumes the first waiting stream, and the next once it has done what it can (its promise
   * jobs all run before the tick queue, so a tick queued from a promise job runs after them),
   * while the slice lasts.
   */
  private resumeWhileTimeLeft(): void {
    const resume = this.waiting.shift();
    if (!resume) return;
    resume();
    queueMicrotask(() =>
      process.nextTick(() => {
        if (!this.spent()) this.resumeWhileTimeLeft();
      }),
    );
  }
}
