/**
 * A bound on what requests of one kind a process handles at once: a number of them (batch
 * submissions: each holds a line, a chunk and a file while its body is read), or the bytes of
 * their bodies (JSON bodies, parsed whole). Taken before the body is read, so that a refused
 * request costs no memory.
 */
export class SubmissionSlots {
  private taken = 0;

  constructor(readonly limit: number) {}

  /**
   * `units` slots (one request, or its bytes), and how to give them back (once; later calls do
   * nothing); null when fewer are free.
   */
  tryTake(units = 1): (() => void) | null {
    if (this.taken + units > this.limit) return null;
    this.taken += units;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.taken -= units;
    };
  }

  get inUse(): number {
    return this.taken;
  }
}
