import { LoopSlices } from '../../../src/providers/loop-slices';

const loopComesRound = () => new Promise((resolve) => setImmediate(resolve));

describe('LoopSlices', () => {
  it('lets work go on until its slice is used up, then holds it until the loop comes round', async () => {
    let clock = 0;
    const slices = new LoopSlices(2, () => clock);
    expect(slices.yieldIfSpent()).toBeUndefined();
    clock = 1.5;
    expect(slices.yieldIfSpent()).toBeUndefined();
    clock = 2.5;
    const resumed: string[] = [];
    void slices.yieldIfSpent()!.then(() => resumed.push('first'));
    // Once something waits, later work waits behind it, in order.
    void slices.yieldIfSpent()!.then(() => resumed.push('second'));
    await Promise.resolve();
    expect(resumed).toEqual([]);
    await loopComesRound();
    await loopComesRound();
    expect(resumed).toEqual(['first', 'second']);
    // A new slice: work goes on again.
    expect(slices.yieldIfSpent()).toBeUndefined();
  });

  it('resumes waiting streams in turn while the slice lasts, and the rest the next time round', async () => {
    let clock = 0;
    const slices = new LoopSlices(2, () => clock);
    expect(slices.yieldIfSpent()).toBeUndefined();
    clock = 5;
    const resumed: string[] = [];
    for (const name of ['a', 'b', 'c']) {
      void slices.yieldIfSpent()!.then(() => {
        resumed.push(name);
        // Each read the stream goes on with takes a millisecond.
        clock += 1;
      });
    }
    await loopComesRound();
    expect(resumed).toEqual(['a', 'b']);
    await loopComesRound();
    expect(resumed).toEqual(['a', 'b', 'c']);
  });

  it('gives a new slice each time the loop comes round', async () => {
    let clock = 0;
    const slices = new LoopSlices(2, () => clock);
    expect(slices.yieldIfSpent()).toBeUndefined();
    await loopComesRound();
    clock = 10;
    expect(slices.yieldIfSpent()).toBeUndefined();
  });

  it('never holds work back with a slice of 0', () => {
    let clock = 0;
    const slices = new LoopSlices(0, () => clock);
    for (clock = 0; clock < 100; clock += 10) expect(slices.yieldIfSpent()).toBeUndefined();
  });
});
