import { DeltaPacing } from '../../../src/event-log/delta-pacing';

describe('DeltaPacing', () => {
  const clock = () => {
    let at = 0;
    return { now: () => at, advance: (ms: number) => (at += ms) };
  };

  it('never makes one answer alone wait', () => {
    const time = clock();
    const pacing = new DeltaPacing({ maxIntervalMs: 20, now: time.now });
    pacing.noteStreaming('t1');
    pacing.noteStreaming('t1');
    expect(pacing.intervalMs()).toBe(0);
  });

  it('waits 0.2 ms per answer streaming, up to the maximum', () => {
    const time = clock();
    const pacing = new DeltaPacing({ maxIntervalMs: 20, now: time.now });
    for (let turn = 0; turn < 20; turn++) pacing.noteStreaming(`t${turn}`);
    expect(pacing.intervalMs()).toBeCloseTo(4);
    for (let turn = 20; turn < 300; turn++) pacing.noteStreaming(`t${turn}`);
    expect(pacing.intervalMs()).toBe(20);
  });

  it('forgets answers that stopped streaming after two quiet windows', () => {
    const time = clock();
    const pacing = new DeltaPacing({ maxIntervalMs: 20, now: time.now });
    for (let turn = 0; turn < 50; turn++) pacing.noteStreaming(`t${turn}`);
    time.advance(150);
    // The window before still counts: these answers may be between two appends.
    expect(pacing.intervalMs()).toBeCloseTo(10);
    time.advance(100);
    expect(pacing.intervalMs()).toBe(0);
  });

  it('waits for nothing when its maximum is 0', () => {
    const pacing = new DeltaPacing({ maxIntervalMs: 0 });
    for (let turn = 0; turn < 100; turn++) pacing.noteStreaming(`t${turn}`);
    expect(pacing.intervalMs()).toBe(0);
  });
});
