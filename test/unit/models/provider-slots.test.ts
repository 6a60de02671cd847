import { ProviderSlots } from '../../../src/models/provider-slots';
import { targetUse } from '../../../src/models/target-state';
import { decideFallback } from '../../../src/models/fallback-decision';
import { ProviderError } from '../../../src/providers/provider-error';

describe("a provider's slots (maxConcurrency)", () => {
  it('makes a step past the bound wait for a slot, first come first served, and never fail', async () => {
    const slots = new ProviderSlots(2);
    const never = new AbortController().signal;
    const a = await slots.take(never);
    await slots.take(never);
    const order: string[] = [];
    const third = slots.take(never).then((release) => (order.push('third'), release));
    const fourth = slots.take(never).then((release) => (order.push('fourth'), release));
    await Promise.resolve();
    expect(order).toEqual([]);
    a();
    a(); // twice frees it once
    await third;
    expect(order).toEqual(['third']);
    expect(slots.held).toBe(2);
    (await third)();
    await fourth;
    expect(order).toEqual(['third', 'fourth']);
  });

  it('gives up a wait its signal aborts, and the slot goes to the next in line', async () => {
    const slots = new ProviderSlots(1);
    const release = await slots.take(new AbortController().signal);
    const cancel = new AbortController();
    const cancelled = slots.take(cancel.signal);
    const next = slots.take(new AbortController().signal);
    cancel.abort(new Error('cancelled'));
    await expect(cancelled).rejects.toThrow('cancelled');
    release();
    await expect(next).resolves.toBeInstanceOf(Function);
  });

  it('grants every take at once without a bound', async () => {
    const slots = new ProviderSlots();
    await Promise.all(Array.from({ length: 100 }, () => slots.take(new AbortController().signal)));
    expect(slots.held).toBe(100);
  });
});

describe('routing decisions', () => {
  it('uses a healthy target, passes one cooling down or being probed, probes one whose cooldown ended', () => {
    expect(targetUse(null, 1000)).toBe('use');
    expect(targetUse({ coolingUntil: 2000, failures: 1 }, 1000)).toBe('pass');
    expect(targetUse({ coolingUntil: 500, failures: 1, probeUntil: 1500 }, 1000)).toBe('pass');
    expect(targetUse({ coolingUntil: 500, failures: 1 }, 1000)).toBe('probe');
  });

  const targets = [
    { provider: 'a', model: 'm', contextWindow: 8000 },
    { provider: 'b', model: 'm', contextWindow: 8000 },
    { provider: 'c', model: 'm', contextWindow: 128000 },
  ];
  it.each([
    ['server', { kind: 'cool-down' }],
    ['rate_limited', { kind: 'cool-down' }],
    ['idle_timeout', { kind: 'cool-down' }],
    ['truncated', { kind: 'cool-down' }],
    ['rejected', { kind: 'refused' }],
    ['aborted', { kind: 'abandon' }],
    // b's window is no larger than a's: the next larger is c.
    ['context_length_exceeded', { kind: 'larger-window', index: 2 }],
  ] as const)('after %s on the first target: %j', (kind, decision) => {
    expect(decideFallback(new ProviderError(kind, 'x'), targets, 0)).toEqual(decision);
  });

  it('fails a too-long request when no later target has a larger window', () => {
    expect(decideFallback(new ProviderError('context_length_exceeded', 'x'), targets, 2)).toEqual({ kind: 'context-length-exceeded' });
  });
});
