import { nextTick, type SchedulePlan } from './schedule-plan';
import type { CatchUp, Schedule } from './store/schedules-repository';

/** A tick this much past its time was missed (no worker ran then): `catchUp` decides what it gets. */
export const MISSED_AFTER_MS = 60_000;
/** Ticks looked at in one pass of one schedule: past it, the rest are folded into the last. */
const MAX_TICKS_PER_PASS = 1000;

/** The schedule's plan, as nextTick reads it. */
export function planOf(schedule: Pick<Schedule, 'cron' | 'everyMs' | 'firstAt' | 'at' | 'timezone'>): SchedulePlan {
  if (schedule.cron !== null) return { kind: 'cron', cron: schedule.cron, timezone: schedule.timezone };
  if (schedule.everyMs !== null) return { kind: 'every', everyMs: schedule.everyMs, firstAt: schedule.firstAt! };
  return { kind: 'at', at: schedule.at! };
}

/** The first tick after `after` within `endAt`, null when none is left. Pure. */
export function nextRunAfter(plan: SchedulePlan, after: Date, endAt: Date | null): Date | null {
  const next = nextTick(plan, after);
  return next && (!endAt || next.getTime() <= endAt.getTime()) ? next : null;
}

/** What a pass does with a schedule's due ticks. */
export interface TickDecision {
  /** The ticks that run, oldest first. */
  runs: Date[];
  /** Ticks recorded `skipped` (missed, with `catchUp: "skip"`). */
  skipped: Date[];
  /** Where the schedule goes on from. */
  nextRunAt: Date | null;
}

/**
 * The due ticks from `nextRunAt` up to `now`. Each tick still on time runs, even when a pass sees
 * several (a pass that failed, a claim taken over from a worker that died): no tick is lost while
 * a worker runs. Ticks missed while no worker ran (more than MISSED_AFTER_MS late): `catchUp:
 * "one"` runs once for all of them (as the latest), `"skip"` records them skipped. Pure.
 */
export function decideTicks(input: { plan: SchedulePlan; nextRunAt: Date; endAt: Date | null; catchUp: CatchUp; now: Date }): TickDecision {
  const due: Date[] = [];
  let tick: Date | null = input.nextRunAt;
  while (tick && tick.getTime() <= input.now.getTime() && due.length < MAX_TICKS_PER_PASS) {
    due.push(tick);
    tick = nextRunAfter(input.plan, tick, input.endAt);
  }
  const nextRunAt = tick && tick.getTime() <= input.now.getTime() ? nextRunAfter(input.plan, input.now, input.endAt) : tick;
  const isMissed = (at: Date) => input.now.getTime() - at.getTime() > MISSED_AFTER_MS;
  const missed = due.filter(isMissed);
  const onTime = due.filter((at) => !isMissed(at));
  if (input.catchUp === 'skip') return { runs: onTime, skipped: missed, nextRunAt };
  const latestMissed = missed[missed.length - 1];
  return { runs: latestMissed ? [latestMissed, ...onTime] : onTime, skipped: [], nextRunAt };
}
