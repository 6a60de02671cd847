import type { Logger } from 'pino';
import { startPeriodicPass, type PeriodicPass } from '../timers/periodic-pass';
import { SCHEDULES_PER_PASS, type ScheduleRunner } from './schedule-runner';

/** How often each worker looks for due schedules: a run is admitted within about this of its time. */
export const SCHEDULE_PASS_INTERVAL_MS = 1000;

/**
 * Every worker runs this: each pass claims the due schedules no other worker holds (one row, one
 * worker), so ticks go on while any worker runs, and no tick runs twice (the run row is unique).
 */
export function startScheduleTicker(runner: Pick<ScheduleRunner, 'fireDue'>, options: { logger: Logger; intervalMs?: number; now?: () => Date }): PeriodicPass {
  const now = options.now ?? (() => new Date());
  // A pass that claimed a full batch may have left more due: the next starts at once.
  return startPeriodicPass(async () => (await runner.fireDue(now())) >= SCHEDULES_PER_PASS, {
    intervalMs: options.intervalMs ?? SCHEDULE_PASS_INTERVAL_MS,
    atStart: true,
    onError: (error) => options.logger.warn({ err: error }, 'schedule pass failed; the next one tries again'),
  });
}
