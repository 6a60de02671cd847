/** The most requests one statement carries; past it, the rest go in the next. */
const MAX_BATCH = 128;

interface Waiting<Input, Output> {
  input: Input;
  resolve(output: Output): void;
  reject(error: unknown): void;
}

/**
 * Group commit for one kind of single-row write: the requests made in one tick go as one
 * statement, and those made while a statement is in flight go together in the next, so eight
 * tool jobs started one after another cost about two round trips instead of eight. Each request
 * is answered only once the statement that carried it has returned (committed: the statements
 * run outside transactions), so a caller still acts on its own row only after it is stored. A
 * failed statement of several requests sends each of them again alone, so that one row the
 * database refuses fails only its own caller; what fails alone goes to its caller, whose own
 * handling (waiting out an outage, retrying) then applies.
 */
export class CoalescedStatements<Input, Output> {
  private waiting: Waiting<Input, Output>[] = [];
  private sending = false;

  /** `runBatch` answers each input, in order. */
  constructor(private readonly runBatch: (inputs: Input[]) => Promise<Output[]>) {}

  run(input: Input): Promise<Output> {
    return new Promise<Output>((resolve, reject) => {
      this.waiting.push({ input, resolve, reject });
      if (this.sending) return;
      this.sending = true;
      // The rest of this tick's requests join the first statement.
      queueMicrotask(() => void this.drain());
    });
  }

  private async drain(): Promise<void> {
    while (this.waiting.length > 0) {
      const batch = this.waiting.splice(0, MAX_BATCH);
      try {
        const outputs = await this.runBatch(batch.map((each) => each.input));
        batch.forEach((each, index) => each.resolve(outputs[index]!));
      } catch (error) {
        if (batch.length === 1) batch[0]!.reject(error);
        else for (const each of batch) await this.runAlone(each);
      }
    }
    this.sending = false;
  }

  private async runAlone(each: Waiting<Input, Output>): Promise<void> {
    try {
      const [output] = await this.runBatch([each.input]);
      each.resolve(output!);
    } catch (error) {
      each.reject(error);
    }
  }
}
