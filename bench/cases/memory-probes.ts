import { readFileSync } from 'node:fs';
import { getHeapStatistics, setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import OpenAI, { toFile } from 'openai';
import { onMajorGc } from '../../src/metrics/heap-after-gc';
import type { Benchmark, ReportBuilder } from '../lib/benchmark';
import { startSwitchyard } from '../lib/switchyard-stack';
import type { RunContext } from '../lib/run-context';

const MiB = 2 ** 20;
/** 64 arrays of 16,384 doubles: 8 MiB, as in test/unit/metrics/heap-after-gc.test.ts. */
const RELEASED_ARRAYS = 64;
const SMALLER_FILE_MIB = 40;
const LARGER_FILE_MIB = 160;

/**
 * The two memory readings the tests only check the direction of: (a) how much of 8 MiB released
 * the heap-after-major-GC reading (switchyard_heap_after_major_gc_bytes) shows, against the
 * V8 heap statistics read right after the same kind of collection in the same process; (b) the
 * peak RSS growth of an API process that uploads and downloads a 160 MB file after a 40 MB one,
 * against the 120 MiB it would grow holding the larger file whole.
 */
export const memoryProbes: Benchmark = {
  name: 'memory-probes',
  title: 'Memory probes: the heap after a major GC, and a large file through the files API',
  kind: 'case',
  timeoutMs: 600_000,
  async run(context, report) {
    report.note(
      `(a) in the bench process, ${RELEASED_ARRAYS} arrays of 16,384 doubles (8 MiB) held, then released, a full collection after each: the drop the ` +
        'heap-after-GC watcher read, against the drop of getHeapStatistics().used_heap_size read right after a forced full collection. ' +
        `(b) an API process (OPENAI_MAX_FILE_BYTES 200 MiB): POST /openai/v1/files and GET its content of ${SMALLER_FILE_MIB} MiB (warming up), ` +
        `then of ${LARGER_FILE_MIB} MiB; peak RSS (VmHWM) growth over the second round trip, against the ${LARGER_FILE_MIB - SMALLER_FILE_MIB} MiB difference of the files.`,
    );
    report.define('memoryProbes.heap.raw', { label: 'getHeapStatistics after a full GC: drop once 8 MiB are released', unit: 'MiB' });
    report.define('memoryProbes.heap.watcher', { label: 'heap after major GC (the metric): drop once 8 MiB are released', unit: 'MiB', baselineKey: 'memoryProbes.heap.raw' });
    report.define('memoryProbes.files.extra', { label: `the ${LARGER_FILE_MIB} MiB file − the ${SMALLER_FILE_MIB} MiB one`, unit: 'MiB' });
    report.define('memoryProbes.files.peakGrowth', {
      label: `API process: peak RSS growth, the ${LARGER_FILE_MIB} MiB file up and down after the ${SMALLER_FILE_MIB} MiB one`,
      unit: 'MiB',
      baselineKey: 'memoryProbes.files.extra',
      target: { on: 'ratio', op: '<=', value: 0.5, goal: 'streaming' },
    });
    for (let repetition = 0; repetition < context.options.repetitions; repetition++) await heapDrop(report);
    await largeFiles(context, report);
  },
};

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** A full collection, with the heap statistics read right after it and what the watcher read (delivered after the collection). */
function collect(): Promise<{ raw: number; watched: number }> {
  return new Promise((resolve) => {
    let raw = 0;
    const stop = onMajorGc((watched) => {
      stop();
      resolve({ raw, watched });
    });
    collectGarbage();
    raw = getHeapStatistics().used_heap_size;
  });
}

async function heapDrop(report: ReportBuilder): Promise<void> {
  let retained: number[][] | null = Array.from({ length: RELEASED_ARRAYS }, () => new Array<number>(16_384).fill(1.5));
  const holding = await collect();
  if (retained.length !== RELEASED_ARRAYS) throw new Error('the arrays were not held');
  retained = null;
  const released = await collect();
  report.sample('memoryProbes.heap.raw', (holding.raw - released.raw) / MiB);
  report.sample('memoryProbes.heap.watcher', (holding.watched - released.watched) / MiB);
}

async function largeFiles(context: RunContext, report: ReportBuilder): Promise<void> {
  const line = `${JSON.stringify({ custom_id: 'x'.repeat(40), body: { messages: [{ role: 'user', content: 'y'.repeat(900) }] } })}\n`;
  const build = (mebibytes: number) => toFile(Buffer.from(line.repeat(Math.ceil((mebibytes * MiB) / line.length))), 'big.jsonl');
  // Both built before any request: building one blocks this process long enough for the server
  // to close the idle keep-alive connection the SDK would write the next upload into.
  const [smaller, larger] = [await build(SMALLER_FILE_MIB), await build(LARGER_FILE_MIB)];
  for (let repetition = 0; repetition < Math.min(context.options.repetitions, 3); repetition++) {
    // A process of its own each time: memory a process has taken is not handed back.
    const stack = await startSwitchyard(context, {
      name: `memory-probes-files-${repetition + 1}`,
      topology: 'api-and-workers',
      workers: 0,
      env: { OPENAI_MAX_FILE_BYTES: String(200 * MiB) },
    });
    try {
      const client = new OpenAI({ baseURL: `${stack.url}/openai/v1`, apiKey: stack.apiKey, maxRetries: 0 });
      const pid = stack.services.find((service) => service.role === 'api')!.process.pid;
      const roundTrip = async (upload: Awaited<ReturnType<typeof toFile>>) => {
        const file = await client.files.create({ file: upload, purpose: 'batch' });
        const back = Buffer.from(await (await client.files.content(file.id)).arrayBuffer());
        if (back.length !== upload.size) throw new Error(`the file came back with ${back.length} bytes of ${upload.size}`);
      };
      await roundTrip(smaller);
      const warmed = peakRssMiB(pid);
      await roundTrip(larger);
      report.sample('memoryProbes.files.peakGrowth', peakRssMiB(pid) - warmed);
      report.sample('memoryProbes.files.extra', (larger.size - smaller.size) / MiB);
    } finally {
      await stack.stop();
    }
  }
}

/** The most memory the process has held so far (VmHWM), in MiB. */
function peakRssMiB(pid: number): number {
  const match = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return Number(match![1]) / 1024;
}
