import { toolExecutionsTimeMs } from '../../../src/queue/tool-retry-policy';
import { invocationWaitMs } from '../../../src/tool-calls/invocation-wait';

describe('invocationWaitMs', () => {
  it('waits for all the time a tool with many retries may take: its 11 timeouts and 511.5 s of delays', () => {
    const tool = { timeoutMs: 1000, retries: 10 };
    expect(invocationWaitMs(tool)).toBeGreaterThan(11 * 1000 + 511_500);
  });

  it('waits longer than the tool’s executions take, whatever its retries, for the queue between them', () => {
    for (const retries of [0, 1, 2, 5, 10]) {
      const tool = { timeoutMs: 5000, retries };
      expect(invocationWaitMs(tool)).toBeGreaterThan(toolExecutionsTimeMs(tool));
    }
  });

  it('gives every attempt at least 2 s of the queue on top of its timeout, and 10 s more', () => {
    // What it gave before it counted the retry policy's delays; a tool with few retries keeps it.
    for (const retries of [0, 1, 2]) expect(invocationWaitMs({ timeoutMs: 5000, retries })).toBeGreaterThanOrEqual((5000 + 2000) * (retries + 1) + 10_000);
  });
});
