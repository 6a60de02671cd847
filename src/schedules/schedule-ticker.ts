import type { Logger } from 'pino';
import { startPeriodicPass, type PeriodicPass } from '../timers/periodic-pass';
import type { ScheduleRunner } from './schedule-runner';

/** How often at least each worker looks for due schedules: a schedule made or moved by another process is seen within this. */
export const SCHEDULE_PASS_INTERVAL_MS = 1000;

/**
 * Every worker runs this: each pass claims the due schedules no other worker holds (one row, one
 * worker), so ticks go on while any worker runs, and no tick runs twice (the run row is unique).
 */
export function startScheduleTicker(runner: Pick<ScheduleRunner, 'fireDue'>, options: { logger: Logger; intervalMs?: number; now?: () => Date }): PeriodicPass {
  const now = options.now ?? (() => new Date());
  // A pass that claimed any schedule was at work while more came due (1,000 schedules every 10 s
  // are 100 due a second): the next starts at once and takes what came due meanwhile, so a busy
  // worker's passes follow one another, each as large as the one before took long (up to
  // SCHEDULES_PER_PASS). One that claimed none waits for the earliest tick not yet due, at most
  // the interval (which also bounds how late a schedule made or moved meanwhile is seen): an
  // idle worker costs one indexed read a second, and a tick waits for no pass.
  return startPeriodicPass(
    async () => {
      const { claimed, nextDueAt } = await runner.fireDue(now());
      if (claimed > 0) return true;
      return nextDueAt ? nextDueAt.getTime() - now().getTime() : false;
    },
    {
      intervalMs: options.intervalMs ?? SCHEDULE_PASS_INTERVAL_MS,
      atStart: true,
      onError: (error) => options.logger.warn({ err: error }, 'schedule pass failed; the next one tries again'),
    },
  );
}
