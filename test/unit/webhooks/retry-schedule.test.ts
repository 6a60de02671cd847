import { decideRetry } from '../../../src/webhooks/retry-schedule';

const DAY = 24 * 3600_000;
const schedule = { delaysMs: [5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000], retryForMs: DAY };
const middle = () => 0.5;

describe('decideRetry', () => {
  it('retries within seconds first (5 s, 30 s), then backs off to hourly', () => {
    const delays = [1, 2, 3, 4, 5, 6, 7, 8].map((failedAttempts) => decideRetry(schedule, { failedAttempts, sinceStartMs: 0 }, middle));
    expect(delays).toEqual([5_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 3_600_000, 3_600_000].map((delayMs) => ({ kind: 'retry', delayMs })));
  });

  it('jitters each wait by up to 10 % either way', () => {
    expect(decideRetry(schedule, { failedAttempts: 2, sinceStartMs: 0 }, () => 0)).toEqual({ kind: 'retry', delayMs: 27_000 });
    expect(decideRetry(schedule, { failedAttempts: 2, sinceStartMs: 0 }, () => 0.999999)).toEqual({ kind: 'retry', delayMs: 33_000 });
  });

  it('gives up once the next attempt would come more than 24 h after the event', () => {
    expect(decideRetry(schedule, { failedAttempts: 20, sinceStartMs: DAY - 3_600_000 }, middle)).toEqual({ kind: 'retry', delayMs: 3_600_000 });
    expect(decideRetry(schedule, { failedAttempts: 21, sinceStartMs: DAY - 3_599_999 }, middle)).toEqual({ kind: 'give_up' });
  });

  it('makes 29 attempts over the day (6 in the first 43 minutes, then hourly) with the default schedule', () => {
    let sinceStartMs = 0;
    let attempts = 1;
    for (;;) {
      const decision = decideRetry(schedule, { failedAttempts: attempts, sinceStartMs }, middle);
      if (decision.kind === 'give_up') break;
      sinceStartMs += decision.delayMs;
      attempts++;
    }
    expect(attempts).toBe(29);
  });
});
