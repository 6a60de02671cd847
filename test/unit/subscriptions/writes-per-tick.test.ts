import { Writable } from 'node:stream';
import { writesPerTick } from '../../../src/subscriptions/writes-per-tick';

/** A stream that records each write the way a socket makes it: one system call per `_write`/`_writev`. */
function recordingStream(): { stream: Writable; calls: string[][] } {
  const calls: string[][] = [];
  const stream = new Writable({
    decodeStrings: false,
    write(chunk: string, _encoding, callback) {
      calls.push([chunk]);
      callback();
    },
    writev(chunks, callback) {
      calls.push(chunks.map(({ chunk }) => chunk as string));
      callback();
    },
  });
  return { stream, calls };
}

const nextTick = () => new Promise<void>((resolve) => process.nextTick(resolve));

describe('writesPerTick', () => {
  it('sends what one tick writes in one call, in order, and the next tick in another', async () => {
    const { stream, calls } = recordingStream();
    const hold = writesPerTick(stream);
    for (const frame of ['a', 'b', 'c']) {
      hold();
      stream.write(frame);
    }
    expect(calls).toEqual([]);
    await nextTick();
    expect(calls).toEqual([['a', 'b', 'c']]);

    hold();
    stream.write('d');
    await nextTick();
    expect(calls).toEqual([['a', 'b', 'c'], ['d']]);
  });

  it('flushes early once 64 KiB wait, so a long replay is not held in memory', async () => {
    const { stream, calls } = recordingStream();
    const hold = writesPerTick(stream);
    const big = 'x'.repeat(40 * 1024);
    for (let i = 0; i < 3; i++) {
      hold();
      stream.write(big);
    }
    expect(calls.map((call) => call.length)).toEqual([2]);
    await nextTick();
    expect(calls.map((call) => call.length)).toEqual([2, 1]);
  });

  it('leaves a stream ended within the tick ended, with everything written', async () => {
    const { stream, calls } = recordingStream();
    const hold = writesPerTick(stream);
    hold();
    stream.write('last');
    stream.end();
    await nextTick();
    expect(calls.flat()).toEqual(['last']);
    expect(stream.writableEnded).toBe(true);
  });
});
