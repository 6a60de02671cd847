import { decideTicks } from '../../../src/schedules/schedule-ticks';
import type { SchedulePlan } from '../../../src/schedules/schedule-plan';

const every10s: SchedulePlan = { kind: 'every', everyMs: 10_000, firstAt: new Date('2026-05-01T10:00:00Z') };
const at = (seconds: number) => new Date(Date.parse('2026-05-01T10:00:00Z') + seconds * 1000);
const iso = (dates: Date[]) => dates.map((date) => date.toISOString());

describe("a pass's due ticks", () => {
  it('runs each tick still on time when a pass sees several (a claim taken over from a dead worker)', () => {
    for (const catchUp of ['one', 'skip'] as const) {
      const decision = decideTicks({ plan: every10s, nextRunAt: at(0), endAt: null, catchUp, now: at(25) });
      expect(iso(decision.runs)).toEqual(iso([at(0), at(10), at(20)]));
      expect(decision.skipped).toEqual([]);
      expect(decision.nextRunAt).toEqual(at(30));
    }
  });

  it('folds the ticks missed while no worker ran per catchUp, and runs the ones on time', () => {
    const one = decideTicks({ plan: every10s, nextRunAt: at(0), endAt: null, catchUp: 'one', now: at(95) });
    // 0…30 are more than 60 s late: one run for them, as the latest; 40…90 each run.
    expect(iso(one.runs)).toEqual(iso([at(30), at(40), at(50), at(60), at(70), at(80), at(90)]));
    const skip = decideTicks({ plan: every10s, nextRunAt: at(0), endAt: null, catchUp: 'skip', now: at(95) });
    expect(iso(skip.skipped)).toEqual(iso([at(0), at(10), at(20), at(30)]));
    expect(iso(skip.runs)).toEqual(iso([at(40), at(50), at(60), at(70), at(80), at(90)]));
    expect(skip.nextRunAt).toEqual(at(100));
  });
});
