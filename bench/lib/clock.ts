import { performance } from 'node:perf_hooks';

/** Milliseconds on the monotonic clock of this process; every timing of the suite uses it. */
export const now = (): number => performance.now();

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Rejects after `ms` with a message naming what was awaited, so that a hung benchmark fails
 * with a reason instead of eating the run's time budget.
 */
export function withTimeout<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms: ${what}`)), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
