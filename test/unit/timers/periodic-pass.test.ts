import { startPeriodicPass } from '../../../src/timers/periodic-pass';

/** A pass the test ends by hand, counting how many started and how many ran at once. */
function controlledPass() {
  const ends: Array<() => void> = [];
  let started = 0;
  let inFlight = 0;
  let mostAtOnce = 0;
  const pass = () =>
    new Promise<void>((resolve) => {
      started++;
      inFlight++;
      mostAtOnce = Math.max(mostAtOnce, inFlight);
      ends.push(() => {
        inFlight--;
        resolve();
      });
    });
  return { pass, ends, started: () => started, mostAtOnce: () => mostAtOnce };
}

describe('startPeriodicPass', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('runs at start when asked, then one interval after each pass ends, never two at once', async () => {
    const p = controlledPass();
    const periodic = startPeriodicPass(p.pass, { intervalMs: 100, atStart: true, onError: () => {} });
    expect(p.started()).toBe(1);
    await jest.advanceTimersByTimeAsync(1000);
    expect(p.started()).toBe(1);
    p.ends.shift()!();
    await jest.advanceTimersByTimeAsync(99);
    expect(p.started()).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(p.started()).toBe(2);
    expect(p.mostAtOnce()).toBe(1);
    p.ends.shift()!();
    await periodic.stop();
  });

  it('waits an interval for the first pass without atStart', async () => {
    const p = controlledPass();
    const periodic = startPeriodicPass(p.pass, { intervalMs: 100, onError: () => {} });
    expect(p.started()).toBe(0);
    await jest.advanceTimersByTimeAsync(100);
    expect(p.started()).toBe(1);
    p.ends.shift()!();
    await periodic.stop();
  });

  it('starts the next pass at once after one that says it has more to do', async () => {
    let calls = 0;
    const periodic = startPeriodicPass(async () => ++calls < 3, { intervalMs: 1000, atStart: true, onError: () => {} });
    await jest.advanceTimersByTimeAsync(10);
    expect(calls).toBe(3);
    // The last pass had nothing more: the next one an interval later.
    await jest.advanceTimersByTimeAsync(900);
    expect(calls).toBe(3);
    await jest.advanceTimersByTimeAsync(200);
    expect(calls).toBe(4);
    await periodic.stop();
  });

  it('starts the next pass when one says it next has work, or after the interval if that comes first', async () => {
    const answers = [250, 5000, -5];
    let calls = 0;
    const periodic = startPeriodicPass(async () => answers[calls++], { intervalMs: 1000, atStart: true, onError: () => {} });
    await jest.advanceTimersByTimeAsync(249);
    expect(calls).toBe(1);
    await jest.advanceTimersByTimeAsync(1);
    expect(calls).toBe(2);
    // 5 s away: the interval comes first.
    await jest.advanceTimersByTimeAsync(999);
    expect(calls).toBe(2);
    await jest.advanceTimersByTimeAsync(1);
    expect(calls).toBe(3);
    // Work already due: at once, not an interval later.
    await jest.advanceTimersByTimeAsync(1);
    expect(calls).toBe(4);
    await periodic.stop();
  });

  it('hands a failed pass to onError and runs the next one', async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const periodic = startPeriodicPass(
      async () => {
        calls++;
        if (calls === 1) throw new Error('boom');
      },
      { intervalMs: 50, atStart: true, onError: (error) => errors.push(error) },
    );
    await jest.advanceTimersByTimeAsync(50);
    expect(errors).toEqual([new Error('boom')]);
    expect(calls).toBe(2);
    await periodic.stop();
  });

  it('stop waits for the pass under way and starts no other', async () => {
    const p = controlledPass();
    const periodic = startPeriodicPass(p.pass, { intervalMs: 10, atStart: true, onError: () => {} });
    let stopped = false;
    const stopping = periodic.stop().then(() => (stopped = true));
    await jest.advanceTimersByTimeAsync(0);
    expect(stopped).toBe(false);
    p.ends.shift()!();
    await stopping;
    await jest.advanceTimersByTimeAsync(1000);
    expect(p.started()).toBe(1);
  });
});
