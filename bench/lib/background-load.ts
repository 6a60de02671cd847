import { now, sleep } from './clock';

/** One background answer, run to its end; `onText` is told each piece of text as it arrives. */
export type BackgroundAnswer = (slot: number, onText: (chars: number) => void) => Promise<void>;

/**
 * Keeps `inFlight` answers streaming, each restarted as it ends, and counts the text they
 * deliver. The slots start spread over `rampMs` (about one answer's length), so that the
 * answers do not all begin, end and restart together.
 */
export class BackgroundLoad {
  private chars = 0;
  private countedSince = now();
  private stopping = false;
  private readonly slots: Promise<void>[] = [];
  /** Answers that failed (each restarted like one that ended); the first few errors, for the report. */
  failures = 0;
  readonly errors: string[] = [];

  private constructor(
    private readonly inFlight: number,
    private readonly answer: BackgroundAnswer,
  ) {}

  /** Starts the slots and resolves once every one of them has begun (after about `rampMs`). */
  static async start(inFlight: number, answer: BackgroundAnswer, rampMs: number): Promise<BackgroundLoad> {
    const load = new BackgroundLoad(inFlight, answer);
    for (let slot = 0; slot < inFlight; slot++) {
      load.slots.push(load.keepRunning(slot));
      await sleep(rampMs / inFlight);
    }
    return load;
  }

  /** Text characters delivered since the last call, and over how many ms. */
  take(): { chars: number; ms: number } {
    const at = now();
    const taken = { chars: this.chars, ms: at - this.countedSince };
    this.chars = 0;
    this.countedSince = at;
    return taken;
  }

  /** Stops restarting answers and waits for those in flight to end. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(this.slots);
  }

  get size(): number {
    return this.inFlight;
  }

  private async keepRunning(slot: number): Promise<void> {
    const onText = (chars: number) => {
      this.chars += chars;
    };
    while (!this.stopping) {
      try {
        await this.answer(slot, onText);
      } catch (error) {
        this.failures++;
        if (this.errors.length < 3) this.errors.push(error instanceof Error ? error.message : String(error));
        // An answer that fails at once would otherwise spin this loop on the cores being measured.
        await sleep(100);
      }
    }
  }
}
