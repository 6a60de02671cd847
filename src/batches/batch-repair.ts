import type { Logger } from 'pino';
import { startPeriodicPass, type PeriodicPass } from '../timers/periodic-pass';
import type { BatchRunner } from './batch-runner';

/**
 * Repairs batches every `intervalMs` in each worker process (a pass is idempotent, so two
 * processes at once do no harm): what a process that died mid-step left, is finished.
 */
export function startBatchRepair(runner: Pick<BatchRunner, 'repair'>, options: { intervalMs: number; logger: Logger }): PeriodicPass {
  return startPeriodicPass(() => runner.repair(), {
    intervalMs: options.intervalMs,
    onError: (error) => options.logger.warn({ err: error }, 'batch repair pass failed; trying again later'),
  });
}
