import { StartupError, startFailureLine } from '../errors/startup-error';
import { errorMessage } from '../errors/switchyard-error';

export { StartupError };

/** What a process gets past its jobs' grace period to hand them back and close its connections. */
export const CLOSE_MARGIN_MS = 5_000;

export interface RunningMain {
  close(): Promise<void>;
  /**
   * Past this long after the signal the process exits (code 1) even if `close` has not
   * finished: BullMQ's close and Redis connections with an offline queue wait for Redis
   * with no limit, so an outage would otherwise keep a stopping process alive for good.
   * Jobs it still held come back to other workers through the stall checker, as after a crash.
   */
  closeTimeoutMs?: number;
}

/**
 * Runs an entry point: whatever stops its start ends the process with one line (no stack
 * trace, {@link startFailureLine}); SIGTERM and SIGINT call the returned `close` once, then exit.
 */
export function runMain(main: () => Promise<RunningMain>): void {
  let closing = false;
  main()
    .then((running) => {
      const stop = (signal: NodeJS.Signals) => {
        if (closing) return;
        closing = true;
        process.stderr.write(`switchyard: ${signal}, shutting down\n`);
        if (running.closeTimeoutMs !== undefined) {
          const limit = running.closeTimeoutMs;
          setTimeout(() => {
            process.stderr.write(`switchyard: not closed within ${limit} ms (is Redis or PostgreSQL unreachable?); exiting anyway\n`);
            process.exit(1);
          }, limit).unref();
        }
        running
          .close()
          .then(() => process.exit(0))
          .catch((error: unknown) => {
            process.stderr.write(`switchyard: error while shutting down: ${errorMessage(error)}\n`);
            process.exit(1);
          });
      };
      process.on('SIGTERM', stop);
      process.on('SIGINT', stop);
    })
    .catch((error: unknown) => {
      process.stderr.write(`${startFailureLine(error)}\n`);
      process.exit(1);
    });
}

/** Something a start step opened. */
export interface Closable {
  close(): Promise<unknown>;
}

/**
 * A start in steps, each registering what it opened with `opened`: when a later step throws (a
 * port in use, a prefix taken), what was opened is closed, last first, before the error goes on
 * to {@link runMain}, so that nothing outlives a start that failed (an embedded redis-server, a
 * folder's lock).
 */
export async function startInSteps<T>(start: (opened: <C extends Closable>(part: C) => C) => Promise<T>): Promise<T> {
  const parts: Closable[] = [];
  try {
    return await start((part) => {
      parts.push(part);
      return part;
    });
  } catch (error) {
    for (const part of parts.reverse()) await part.close().catch(() => undefined);
    throw error;
  }
}
