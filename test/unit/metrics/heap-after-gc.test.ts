import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createMetrics } from '../../../src/metrics/metrics';
import { onMajorGc } from '../../../src/metrics/heap-after-gc';

// A full collection on demand, as --expose-gc would give.
setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** Runs a full collection and resolves with the heap the watcher read after it. */
function afterMajorGc(): Promise<number> {
  return new Promise((resolve) => {
    const stop = onMajorGc((bytes) => {
      stop();
      resolve(bytes);
    });
    collectGarbage();
  });
}

const value = (page: string) => Number(/^switchyard_heap_after_major_gc_bytes (\S+)$/m.exec(page)?.[1]);

describe('the heap after a major collection', () => {
  it('follows what survives a collection, and the metrics page shows it', async () => {
    const metrics = createMetrics();
    let retained: number[][] | null = Array.from({ length: 64 }, () => new Array<number>(16_384).fill(1.5));
    const holding = await afterMajorGc();
    expect(value(await metrics.registry.metrics())).toBe(holding);
    expect(retained.length).toBe(64);
    retained = null;
    const released = await afterMajorGc();
    // 64 arrays of 16,384 doubles: 8 MiB that no longer survive. How much of that the reading
    // shows is `npm run bench -- memory-probes`, not a bound here (other work shares the heap).
    expect(released).toBeLessThan(holding);
    expect(value(await metrics.registry.metrics())).toBe(released);
  });
});
