import type { Logger } from 'pino';
import { SCHEDULES_PER_PASS, type ScheduleRunner } from './schedule-runner';

/** How often each worker looks for due schedules: a run is admitted within about this of its time. */
export const SCHEDULE_PASS_INTERVAL_MS = 1000;

/**
 * Every worker runs this: each pass claims the due schedules no other worker holds (one row, one
 * worker), so ticks go on while any worker runs, and no tick runs twice (the run row is unique).
 */
export function startScheduleTicker(runner: Pick<ScheduleRunner, 'fireDue'>, options: { logger: Logger; intervalMs?: number; now?: () => Date }): { stop(): Promise<void> } {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<void> = Promise.resolve();
  /** Whether the pass claimed a full batch: more may be due, the next pass starts at once. */
  const pass = async () => {
    try {
      return (await runner.fireDue((options.now ?? (() => new Date()))())) >= SCHEDULES_PER_PASS;
    } catch (error) {
      options.logger.warn({ err: error }, 'schedule pass failed; the next one tries again');
      return false;
    }
  };
  const loop = () => {
    if (stopped) return;
    running = pass().then((more) => {
      if (!stopped) timer = setTimeout(loop, more ? 0 : (options.intervalMs ?? SCHEDULE_PASS_INTERVAL_MS));
    });
  };
  loop();
  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}
