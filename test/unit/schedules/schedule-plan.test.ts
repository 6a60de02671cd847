import { nextTick, type SchedulePlan } from '../../../src/schedules/schedule-plan';

/** The ticks from `from` (exclusive) up to `until`, as a fake clock walks them. */
function ticks(plan: SchedulePlan, from: string, until: string): string[] {
  const seen: string[] = [];
  for (let tick = nextTick(plan, new Date(from)); tick && tick < new Date(until); tick = nextTick(plan, tick)) seen.push(tick.toISOString());
  return seen;
}

const paris = (cron: string): SchedulePlan => ({ kind: 'cron', cron, timezone: 'Europe/Paris' });

describe("a schedule's next tick", () => {
  it('runs 0 9 * * * in Paris at 09:00 local on both sides of both changes', () => {
    expect(ticks(paris('0 9 * * *'), '2026-03-27T12:00:00Z', '2026-03-31T00:00:00Z')).toEqual(['2026-03-28T08:00:00.000Z', '2026-03-29T07:00:00.000Z', '2026-03-30T07:00:00.000Z']);
    expect(ticks(paris('0 9 * * *'), '2026-10-24T00:00:00Z', '2026-10-27T00:00:00Z')).toEqual(['2026-10-24T07:00:00.000Z', '2026-10-25T08:00:00.000Z', '2026-10-26T08:00:00.000Z']);
  });

  it('runs a local time that does not exist that day at the next minute that does', () => {
    // 2026-03-29: 02:00 CET becomes 03:00 CEST; 02:30 does not exist, 03:00 CEST is 01:00 UTC.
    expect(ticks(paris('30 2 * * *'), '2026-03-28T12:00:00Z', '2026-03-31T00:00:00Z')).toEqual(['2026-03-29T01:00:00.000Z', '2026-03-30T00:30:00.000Z']);
  });

  it('runs a local time that happens twice once, at its first occurrence', () => {
    // 2026-10-25: 03:00 CEST becomes 02:00 CET; 02:30 happens at 00:30 and 01:30 UTC.
    expect(ticks(paris('30 2 * * *'), '2026-10-24T12:00:00Z', '2026-10-26T12:00:00Z')).toEqual(['2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']);
  });

  it('follows elapsed time through the change for ticks that recur within the hour', () => {
    // 2026-10-25 00:00–02:00 UTC holds the repeated hour (02:00–03:00 local twice): every 15 minutes, each once.
    expect(ticks(paris('*/15 * * * *'), '2026-10-25T00:00:00Z', '2026-10-25T02:00:00Z')).toEqual(
      ['00:15', '00:30', '00:45', '01:00', '01:15', '01:30', '01:45'].map((time) => `2026-10-25T${time}:00.000Z`),
    );
    const spring = ticks(paris('*/30 * * * *'), '2026-03-29T00:00:00Z', '2026-03-29T02:00:00Z');
    expect(spring).toEqual(['2026-03-29T00:30:00.000Z', '2026-03-29T01:00:00.000Z', '2026-03-29T01:30:00.000Z']);
  });

  it('ticks every interval from the first tick, and once for at', () => {
    const every: SchedulePlan = { kind: 'every', everyMs: 90_000, firstAt: new Date('2026-01-01T00:00:00Z') };
    expect(nextTick(every, new Date('2025-12-31T23:00:00Z'))?.toISOString()).toBe('2026-01-01T00:00:00.000Z');
    expect(nextTick(every, new Date('2026-01-01T00:00:00Z'))?.toISOString()).toBe('2026-01-01T00:01:30.000Z');
    expect(nextTick(every, new Date('2026-01-01T00:02:00Z'))?.toISOString()).toBe('2026-01-01T00:03:00.000Z');
    const at: SchedulePlan = { kind: 'at', at: new Date('2026-05-01T10:00:00Z') };
    expect(nextTick(at, new Date('2026-04-30T00:00:00Z'))?.toISOString()).toBe('2026-05-01T10:00:00.000Z');
    expect(nextTick(at, new Date('2026-05-01T10:00:00Z'))).toBeNull();
  });
});
