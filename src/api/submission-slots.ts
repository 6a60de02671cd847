/**
 * A bound on the requests of one kind a process handles at once (batch submissions: each
 * holds a line, a chunk and a file while its body is read). Taken before the body is read,
 * so that a refused request costs no memory.
 */
export class SubmissionSlots {
  private taken = 0;

  constructor(readonly limit: number) {}

  /** A slot, and how to give it back (once; later calls do nothing); null when all are taken. */
  tryTake(): (() => void) | null {
    if (this.taken >= this.limit) return null;
    this.taken++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.taken--;
    };
  }

  get inUse(): number {
    return this.taken;
  }
}
