/**
 * One attempt's time limit combined with the caller's signal. Every kind runs under one, so a
 * tool that ignores its signal still returns on time, and the registry can tell a timeout
 * (retryable) from a cancellation (not) without each kind guessing from its own errors.
 */
export interface Deadline {
  /** Aborted when the time is up or the caller's signal aborts. */
  readonly signal: AbortSignal;
  /** Resolves (never rejects) when `signal` aborts. */
  readonly expired: Promise<'timeout' | 'cancelled'>;
  timedOut(): boolean;
  cancelled(): boolean;
  /** Clears the timer; call it when the attempt settles, or the timer keeps the process alive. */
  dispose(): void;
}

export function startDeadline(timeoutMs: number, parent?: AbortSignal): Deadline {
  const controller = new AbortController();
  let reason: 'timeout' | 'cancelled' | undefined;
  let resolveExpired!: (value: 'timeout' | 'cancelled') => void;
  const expired = new Promise<'timeout' | 'cancelled'>((resolve) => {
    resolveExpired = resolve;
  });

  const abort = (why: 'timeout' | 'cancelled') => {
    if (reason) return;
    reason = why;
    controller.abort(why === 'timeout' ? new DeadlineExceededError(timeoutMs) : (parent?.reason ?? new Error('cancelled')));
    resolveExpired(why);
  };
  const onParentAbort = () => abort('cancelled');

  const timer = setTimeout(() => abort('timeout'), timeoutMs);
  if (parent?.aborted) abort('cancelled');
  else parent?.addEventListener('abort', onParentAbort, { once: true });

  return {
    signal: controller.signal,
    expired,
    timedOut: () => reason === 'timeout',
    cancelled: () => reason === 'cancelled',
    dispose: () => {
      clearTimeout(timer);
      parent?.removeEventListener('abort', onParentAbort);
    },
  };
}

export class DeadlineExceededError extends Error {
  constructor(readonly timeoutMs: number) {
    super(`no answer within ${timeoutMs} ms`);
    this.name = 'DeadlineExceededError';
  }
}
