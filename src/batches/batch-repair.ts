import type { Logger } from 'pino';
import type { BatchRunner } from './batch-runner';

/**
 * Repairs batches every `intervalMs` in each worker process (a pass is idempotent, so two
 * processes at once do no harm): what a process that died mid-step left, is finished.
 */
export function startBatchRepair(runner: Pick<BatchRunner, 'repair'>, options: { intervalMs: number; logger: Logger }): { stop(): Promise<void> } {
  let running: Promise<void> = Promise.resolve();
  let stopped = false;
  const tick = () => {
    if (stopped) return;
    running = running.then(() => runner.repair().catch((error: unknown) => options.logger.warn({ err: error }, 'batch repair pass failed; trying again later')));
  };
  const timer = setInterval(tick, options.intervalMs);
  return {
    async stop() {
      stopped = true;
      clearInterval(timer);
      await running;
    },
  };
}
