import { Cron } from 'croner';

/** When a schedule ticks (docs/API.md, "Schedules"): one of a cron expression, an interval, or one time. */
export type SchedulePlan = { kind: 'cron'; cron: string; timezone: string } | { kind: 'every'; everyMs: number; firstAt: Date } | { kind: 'at'; at: Date };

const MINUTE_MS = 60_000;

/**
 * The first tick strictly after `after`, or null when there is none (an `at` passed). Pure: the
 * clock is the caller's.
 *
 * Cron in `timezone` follows wall-clock time: a fixed local time (`0 9 * * *`) is matched on the
 * local calendar, so it is 09:00 there on both sides of a daylight-saving change; one that does
 * not exist that day (02:30 when clocks jump from 02:00 to 03:00) runs at the first minute that
 * does (03:00), and one that happens twice runs at its first occurrence only. A pattern whose hour
 * is `*` recurs within the hour and follows elapsed time instead: it is matched at the offset the
 * zone has at `after`, so `*\/15` ticks every 15 minutes through the change, neither skipping the
 * repeated hour nor running twice in it.
 */
export function nextTick(plan: SchedulePlan, after: Date): Date | null {
  switch (plan.kind) {
    case 'at':
      return plan.at.getTime() > after.getTime() ? plan.at : null;
    case 'every': {
      const first = plan.firstAt.getTime();
      if (first > after.getTime()) return plan.firstAt;
      const intervals = Math.floor((after.getTime() - first) / plan.everyMs) + 1;
      return new Date(first + intervals * plan.everyMs);
    }
    case 'cron':
      return recursWithinTheHour(plan.cron) ? elapsedTimeTick(plan, after) : wallClockTick(plan, after);
  }
}

/** A five-field cron expression croner takes; the message says what is wrong with another. */
export function cronProblem(cron: string, timezone: string): string | null {
  if (cron.trim().split(/\s+/).length !== 5) return 'five fields: minute hour day-of-month month day-of-week';
  try {
    new Cron(cron, { timezone, paused: true });
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Whether `timezone` is an IANA name this runtime knows. */
export function isTimeZone(timezone: string): boolean {
  try {
    new Intl.DateTimeFormat('en-US', { timeZone: timezone });
    return true;
  } catch {
    return false;
  }
}

const recursWithinTheHour = (cron: string) => cron.trim().split(/\s+/)[1] === '*';

function elapsedTimeTick(plan: { cron: string; timezone: string }, after: Date): Date | null {
  const offsetMinutes = offsetAt(after.getTime(), plan.timezone) / MINUTE_MS;
  return new Cron(plan.cron, { utcOffset: offsetMinutes, paused: true }).nextRun(after);
}

function wallClockTick(plan: { cron: string; timezone: string }, after: Date): Date | null {
  // The pattern is matched on local wall-clock times, written as if they were UTC.
  const naiveAfter = new Date(after.getTime() + offsetAt(after.getTime(), plan.timezone));
  const naive = new Cron(plan.cron, { timezone: 'UTC', paused: true }).nextRun(naiveAfter);
  return naive ? instantOfLocal(naive.getTime(), plan.timezone) : null;
}

/**
 * The instant a local wall-clock time (as UTC milliseconds) names in `timezone`: its first
 * occurrence when it happens twice, the end of the gap when it does not exist.
 */
export function instantOfLocal(naiveMs: number, timezone: string): Date {
  const before = naiveMs - offsetAt(naiveMs - 12 * 3_600_000, timezone);
  const later = naiveMs - offsetAt(naiveMs + 12 * 3_600_000, timezone);
  const valid = [before, later].filter((instant) => instant + offsetAt(instant, timezone) === naiveMs);
  if (valid.length > 0) return new Date(Math.min(...valid));
  // In a gap: the transition lies between the two readings; the first minute after it exists.
  let low = Math.min(before, later);
  let high = Math.max(before, later);
  const lowOffset = offsetAt(low, timezone);
  while (high - low > MINUTE_MS) {
    const middle = low + Math.floor((high - low) / 2 / MINUTE_MS) * MINUTE_MS;
    if (offsetAt(middle, timezone) === lowOffset) low = middle;
    else high = middle;
  }
  return new Date(high);
}

const partsFormat = new Map<string, Intl.DateTimeFormat>();

/** The zone's offset from UTC at an instant, in milliseconds (local = UTC + offset). */
export function offsetAt(instantMs: number, timezone: string): number {
  let format = partsFormat.get(timezone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: timezone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    partsFormat.set(timezone, format);
  }
  const parts = Object.fromEntries(format.formatToParts(new Date(instantMs)).map((part) => [part.type, Number(part.value)]));
  const local = Date.UTC(parts.year!, parts.month! - 1, parts.day!, parts.hour!, parts.minute!, parts.second!);
  return local - Math.floor(instantMs / 1000) * 1000;
}
