import type { Redis } from 'ioredis';
import { redisFootprint, redisUsedMemory } from './backing-services';
import { now } from './clock';
import { heapFigures } from './metrics-page';
import { rssMiB } from './process-usage';

export interface SoakSample {
  /** Seconds since the sampler started. */
  at: number;
  phase: 'before' | 'load' | 'after';
  turns: number;
  /** RSS (MiB) per process name. */
  rss: Record<string, number>;
  /** V8 heap in use (MiB) per process that serves /metrics (prom-client's default metrics). */
  heap: Record<string, number>;
  /** V8 heap in use right after the last major collection (MiB), per process that serves /metrics. */
  heapAfterGc: Record<string, number>;
  /** INFO memory used_memory of the whole Redis server (MiB). */
  redisUsedMiB: number;
  /** Keys under the case's prefix and their MEMORY USAGE (MiB). */
  prefixKeys: number;
  prefixMiB: number;
}

/** Samples the memory of the service processes and of Redis at a fixed interval, and on demand. */
export class SoakSampler {
  readonly samples: SoakSample[] = [];
  private timer: NodeJS.Timeout | undefined;
  private busy = false;
  private readonly startedAt = now();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly processes: { name: string; pid: number }[],
    private readonly turns: () => number,
    /** Processes whose `/metrics` give their V8 heap, by name. */
    private readonly metricsUrls: { name: string; url: string }[] = [],
  ) {}

  async sample(phase: SoakSample['phase']): Promise<SoakSample> {
    const rss: Record<string, number> = {};
    for (const process of this.processes) rss[process.name] = rssMiB(process.pid);
    const heap: Record<string, number> = {};
    const heapAfterGc: Record<string, number> = {};
    const [usedMemory, footprint] = await Promise.all([
      redisUsedMemory(this.redis),
      redisFootprint(this.redis, this.prefix),
      ...this.metricsUrls.map(async ({ name, url }) => {
        const figures = await heapFigures(url);
        heap[name] = figures.used / 2 ** 20;
        heapAfterGc[name] = figures.afterMajorGc / 2 ** 20;
      }),
    ]);
    const sample: SoakSample = {
      at: (now() - this.startedAt) / 1000,
      phase,
      turns: this.turns(),
      rss,
      heap,
      heapAfterGc,
      redisUsedMiB: usedMemory / 2 ** 20,
      prefixKeys: footprint.keys,
      prefixMiB: footprint.bytes / 2 ** 20,
    };
    this.samples.push(sample);
    return sample;
  }

  /** Samples every `intervalMs` while the load runs (a sample in progress is never doubled). */
  startLoadSampling(intervalMs: number): void {
    this.timer = setInterval(() => {
      if (this.busy) return;
      this.busy = true;
      this.sample('load')
        .catch(() => undefined)
        .finally(() => (this.busy = false));
    }, intervalMs);
  }

  stopLoadSampling(): void {
    clearInterval(this.timer);
  }
}

/** Groups key names by shape (ids replaced by `*`), to show what a prefix still holds. */
export async function keyShapes(redis: Redis, prefix: string): Promise<Map<string, number>> {
  const shapes = new Map<string, number>();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      const shape = key
        .slice(prefix.length)
        .replace(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g, '*')
        .replace(/\d+/g, '*');
      shapes.set(shape, (shapes.get(shape) ?? 0) + 1);
    }
  } while (cursor !== '0');
  return shapes;
}
