import pino from 'pino';
import { startScheduleTicker } from '../../../src/schedules/schedule-ticker';

/** A runner whose passes answer what the test lines up, counting them. */
function scriptedRunner(answers: { claimed: number; nextDueInMs: number | null }[]) {
  let passes = 0;
  return {
    passes: () => passes,
    fireDue: async (now: Date) => {
      const answer = answers[Math.min(passes++, answers.length - 1)]!;
      return { claimed: answer.claimed, nextDueAt: answer.nextDueInMs === null ? null : new Date(now.getTime() + answer.nextDueInMs) };
    },
  };
}

describe('startScheduleTicker', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());
  const logger = pino({ level: 'silent' });

  it('starts the next pass at once after one that claimed any, and at the next tick after one that claimed none', async () => {
    const runner = scriptedRunner([
      { claimed: 3, nextDueInMs: 40 },
      { claimed: 0, nextDueInMs: 40 },
      { claimed: 0, nextDueInMs: null },
    ]);
    const ticker = startScheduleTicker(runner, { logger, intervalMs: 1000 });
    await jest.advanceTimersByTimeAsync(0);
    expect(runner.passes()).toBe(2);
    // Nothing claimed, a tick 40 ms away: the pass then, not a second later.
    await jest.advanceTimersByTimeAsync(39);
    expect(runner.passes()).toBe(2);
    await jest.advanceTimersByTimeAsync(1);
    expect(runner.passes()).toBe(3);
    // No tick ahead at all: the interval.
    await jest.advanceTimersByTimeAsync(999);
    expect(runner.passes()).toBe(3);
    await jest.advanceTimersByTimeAsync(1);
    expect(runner.passes()).toBe(4);
    await ticker.stop();
  });
});
