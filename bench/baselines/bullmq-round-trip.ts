import { Queue, Worker } from 'bullmq';
import { connectRedis, dropRedisKeys } from '../lib/backing-services';
import type { Benchmark } from '../lib/benchmark';
import { now } from '../lib/clock';
import { latencySummary } from '../lib/stats';

const JOBS_PER_REPETITION = 300;
const WARMUP = 30;

/** One BullMQ job at a time: `add` → a worker runs it (returns at once) → `completed`. */
export const bullmqRoundTrip: Benchmark = {
  name: 'bullmq-job',
  title: 'Raw BullMQ: job round trip',
  kind: 'baseline',
  timeoutMs: 60_000,
  async run(context, report) {
    report.define('bullmq.job.p50', { label: 'add → completed, p50', unit: 'ms' });
    report.define('bullmq.job.p99', { label: 'add → completed, p99', unit: 'ms' });
    report.note(
      `${JOBS_PER_REPETITION} sequential jobs per repetition; Queue and Worker (concurrency 50, removeOnComplete) in the bench process; ` +
        `timed from before queue.add to the worker's 'completed' event.`,
    );
    const prefix = `${context.redisPrefix}-raw-job`;
    const connection = connectRedis();
    const queue = new Queue('bench', { connection, prefix });
    const waiting = new Map<string, () => void>();
    const worker = new Worker('bench', async () => 'ok', { connection, prefix, concurrency: 50 });
    worker.on('completed', (job) => waiting.get(job.id!)?.());
    await worker.waitUntilReady();
    let counter = 0;
    const roundTrip = async () => {
      const jobId = `job-${counter++}`;
      const done = new Promise<void>((resolve) => waiting.set(jobId, resolve));
      const startedAt = now();
      await queue.add('job', { n: counter }, { jobId, removeOnComplete: true });
      await done;
      waiting.delete(jobId);
      return now() - startedAt;
    };
    try {
      for (let index = 0; index < WARMUP; index++) await roundTrip();
      for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
        const latencies: number[] = [];
        for (let index = 0; index < JOBS_PER_REPETITION; index++) latencies.push(await roundTrip());
        const summary = latencySummary(latencies);
        report.sample('bullmq.job.p50', summary.p50);
        report.sample('bullmq.job.p99', summary.p99);
      }
    } finally {
      await worker.close();
      await queue.close();
      await dropRedisKeys(connection, `${prefix}:`);
      connection.disconnect();
    }
  },
};
