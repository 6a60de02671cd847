import { setTimeout as sleep } from 'node:timers/promises';
import { isBackendUnavailable } from './backend-unavailable';

/**
 * Runs `fn` until it does not fail for an outage of Redis or PostgreSQL, waiting 200 ms, then
 * twice as long each time up to 5 s. Any other error, or `signal` aborting (shutdown, a lost
 * job lock), ends the wait with the last error. For writes that must not be given up when
 * giving up costs more than waiting: a tool's result once the tool has run.
 */
export async function waitOutOutage<T>(fn: () => Promise<T>, options: { signal: AbortSignal; onWait?: (error: unknown) => void }): Promise<T> {
  for (let delayMs = 200; ; delayMs = Math.min(delayMs * 2, 5000)) {
    try {
      return await fn();
    } catch (error) {
      if (!isBackendUnavailable(error) || options.signal.aborted) throw error;
      options.onWait?.(error);
      await sleep(delayMs, undefined, { signal: options.signal }).catch(() => {
        throw error;
      });
    }
  }
}
