export interface RecordedRequest {
  method: string;
  path: string;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
  receivedAt: number;
  /**
   * What the request was billed, as a provider bills it: its prompt and the completion tokens
   * generated for it, whether or not the client stayed to read them. `reported`: the usage went
   * out to the client (the usage chunk of a stream, a completion's `usage`), so the client knows
   * these figures; else it has to estimate them. Absent until an answer starts.
   */
  billed?: { promptTokens: number; completionTokens: number; reported: boolean };
}

interface Waiter {
  predicate: (request: RecordedRequest) => boolean;
  resolve: (request: RecordedRequest) => void;
  reject: (error: Error) => void;
  timer: NodeJS.Timeout;
}

/** The requests a scripted model received, for tests to inspect and await. Bounded: the oldest go first. */
export class RequestLog {
  /** Oldest first. The same array for the log's life, so a reference to it stays current. */
  readonly requests: RecordedRequest[] = [];
  private readonly waiters = new Set<Waiter>();
  private closed = false;

  constructor(private readonly maxRequests: number) {}

  record(request: RecordedRequest): void {
    this.requests.push(request);
    if (this.requests.length > this.maxRequests) this.requests.splice(0, this.requests.length - this.maxRequests);
    for (const waiter of this.waiters) {
      if (waiter.predicate(request)) this.settle(waiter, () => waiter.resolve(request));
    }
  }

  /** The first recorded request matching `predicate`, past or future; rejects after `timeoutMs` or on close. */
  waitFor(predicate: (request: RecordedRequest) => boolean, timeoutMs: number): Promise<RecordedRequest> {
    const past = this.requests.find(predicate);
    if (past) return Promise.resolve(past);
    if (this.closed) return Promise.reject(new Error('the scripted model is closed'));
    return new Promise((resolve, reject) => {
      const timeout = () => new Error(`no matching request within ${timeoutMs} ms (${this.requests.length} recorded)`);
      const timer = setTimeout(() => this.settle(waiter, () => reject(timeout())), timeoutMs);
      const waiter: Waiter = { predicate, resolve, reject, timer };
      this.waiters.add(waiter);
    });
  }

  /** Rejects every waiter at once, so that a test waiting on a closed model fails instead of hanging. */
  close(): void {
    this.closed = true;
    const closed = () => new Error('the scripted model closed before a matching request arrived');
    for (const waiter of this.waiters) this.settle(waiter, () => waiter.reject(closed()));
  }

  private settle(waiter: Waiter, outcome: () => void): void {
    clearTimeout(waiter.timer);
    this.waiters.delete(waiter);
    outcome();
  }
}
