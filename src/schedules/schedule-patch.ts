import { AppError } from '../errors/app-error';
import { cronProblem } from './schedule-plan';
import { everyMs, type PatchScheduleRequest } from './schedule-request';
import { nextRunAfter, planOf } from './schedule-ticks';
import type { Schedule } from './store/schedules-repository';

type PlanFields = Pick<Schedule, 'cron' | 'everyMs' | 'firstAt' | 'at' | 'timezone'>;

/**
 * A schedule's first tick from `now`: an interval's at its firstAt (or the next one on its grid
 * when that has passed), a cron's or an at's the first after now, not before `startAt`. Pure.
 */
export function firstRunAt(plan: PlanFields, startAt: Date | null, endAt: Date | null, now: Date): Date | null {
  const notBefore = plan.firstAt ?? startAt;
  const from = Math.max(now.getTime(), (notBefore?.getTime() ?? 0) - 1);
  return nextRunAfter(planOf(plan), new Date(from), endAt);
}

/** Whether a PATCH changes the plan (then nextRunAt is computed afresh, as on create). */
export const changesPlan = (patch: PatchScheduleRequest) => [patch.cron, patch.every, patch.at, patch.timezone, patch.startAt].some((field) => field !== undefined);

/**
 * The schedule a PATCH makes, nextRunAt included. Pure. A new plan is checked as on create (the
 * cron against the zone it will have), ticks from `now` (an `every` from `startAt` when there is
 * one, else one interval after the PATCH), and is not caught up. Paused: no tick is due; resumed
 * or given a new `endAt`: from the next tick after now; else the schedule keeps its place.
 */
export function patchedSchedule(schedule: Schedule, patch: PatchScheduleRequest, now: Date): Schedule {
  const next: Schedule = {
    ...schedule,
    ...(patch.content !== undefined ? { content: patch.content } : {}),
    ...(patch.overlap ? { overlap: patch.overlap } : {}),
    ...(patch.catchUp ? { catchUp: patch.catchUp } : {}),
    ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
    ...(patch.endAt !== undefined ? { endAt: patch.endAt } : {}),
    ...(patch.metadata !== undefined ? { metadata: patch.metadata } : {}),
    ...(patch.startAt !== undefined ? { startAt: patch.startAt } : {}),
    ...(patch.timezone !== undefined ? { timezone: patch.timezone } : {}),
  };
  if (changesPlan(patch)) {
    const replaced = patch.cron !== undefined || patch.every !== undefined || patch.at !== undefined;
    const cron = replaced ? (patch.cron ?? null) : schedule.cron;
    const interval = replaced ? (patch.every === undefined ? null : everyMs(patch.every)) : schedule.everyMs;
    const problem = cron === null ? null : cronProblem(cron, next.timezone);
    if (problem) throw new AppError('invalid_request', `invalid request: cron: ${problem}`, [{ field: 'cron', message: problem }]);
    Object.assign(next, {
      cron,
      everyMs: interval,
      at: replaced ? (patch.at ?? null) : schedule.at,
      // An interval keeps its grid unless its plan or its start changes.
      firstAt:
        interval === null ? null : replaced || patch.startAt !== undefined || schedule.firstAt === null ? (next.startAt ?? new Date(now.getTime() + interval)) : schedule.firstAt,
    });
    next.nextRunAt = next.enabled ? firstRunAt(next, next.startAt, next.endAt, now) : null;
    return next;
  }
  const resumed = next.enabled && (!schedule.enabled || patch.endAt !== undefined);
  next.nextRunAt = !next.enabled ? null : resumed ? nextRunAfter(planOf(next), now, next.endAt) : schedule.nextRunAt;
  return next;
}
