import { toolExecutionsTimeMs, toolRetryAfter } from '../../../src/queue/tool-retry-policy';

describe('toolRetryAfter', () => {
  it('doubles from 500 ms', () => {
    expect([1, 2, 3, 4].map((attempt) => toolRetryAfter(attempt, 10))).toEqual([500, 1000, 2000, 4000].map((delayMs) => ({ kind: 'retry', delayMs })));
  });

  it('stops once the attempt that ran was the last of the tool’s retries', () => {
    expect(toolRetryAfter(2, 2)).toEqual({ kind: 'retry', delayMs: 1000 });
    expect(toolRetryAfter(3, 2)).toEqual({ kind: 'stop' });
    expect(toolRetryAfter(1, 0)).toEqual({ kind: 'stop' });
  });
});

describe('toolExecutionsTimeMs', () => {
  it('is one timeout for a tool without retries', () => {
    expect(toolExecutionsTimeMs({ timeoutMs: 3000, retries: 0 })).toBe(3000);
  });

  it('adds every attempt’s timeout and each delay the policy puts between them', () => {
    // Three attempts, with 500 ms and 1000 ms between them.
    expect(toolExecutionsTimeMs({ timeoutMs: 3000, retries: 2 })).toBe(3 * 3000 + 500 + 1000);
  });

  it('counts the 511.5 s of delays a tool with the most retries a tool file allows waits', () => {
    expect(toolExecutionsTimeMs({ timeoutMs: 1000, retries: 10 })).toBe(11 * 1000 + 511_500);
  });
});
