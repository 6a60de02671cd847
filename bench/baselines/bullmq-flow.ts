import { FlowProducer, Worker } from 'bullmq';
import { connectRedis, dropRedisKeys } from '../lib/backing-services';
import type { Benchmark } from '../lib/benchmark';
import { now } from '../lib/clock';
import { latencySummary } from '../lib/stats';
import { WORKLOADS } from '../lib/workloads';

const FLOWS_PER_REPETITION = 60;
const WARMUP = 10;
const { calls } = WORKLOADS.toolFanOut;

/**
 * What Switchyard's tool fan-out is built on, with nothing else: a FlowProducer parent with
 * `calls` children whose worker returns at once; timed until the parent's worker starts it.
 */
export const bullmqFlow: Benchmark = {
  name: 'bullmq-flow',
  title: `Raw BullMQ: 1+${calls} flow`,
  kind: 'baseline',
  timeoutMs: 60_000,
  async run(context, report) {
    report.define('bullmq.flow.p50', { label: `flow.add (1 parent + ${calls} children) → parent processor starts, p50`, unit: 'ms' });
    report.define('bullmq.flow.p99', { label: `flow.add (1 parent + ${calls} children) → parent processor starts, p99`, unit: 'ms' });
    report.note(
      `${FLOWS_PER_REPETITION} sequential flows per repetition; parent and children on two queues, workers (concurrency 50) in the bench process, ` +
        'children return at once, removeOnComplete on all jobs.',
    );
    const prefix = `${context.redisPrefix}-raw-flow`;
    const connection = connectRedis();
    const flows = new FlowProducer({ connection, prefix });
    const waiting = new Map<string, () => void>();
    const children = new Worker('bench-children', async () => 'ok', { connection, prefix, concurrency: 50 });
    const parents = new Worker(
      'bench-parents',
      async (job) => {
        waiting.get(job.id!)?.();
        return 'ok';
      },
      { connection, prefix, concurrency: 50 },
    );
    await Promise.all([children.waitUntilReady(), parents.waitUntilReady()]);
    let counter = 0;
    const oneFlow = async () => {
      const flowId = counter++;
      const parentId = `parent-${flowId}`;
      const started = new Promise<void>((resolve) => waiting.set(parentId, resolve));
      const startedAt = now();
      await flows.add({
        name: 'parent',
        queueName: 'bench-parents',
        opts: { jobId: parentId, removeOnComplete: true },
        children: Array.from({ length: calls }, (_unused, position) => ({
          name: 'child',
          queueName: 'bench-children',
          data: { position },
          opts: { jobId: `child-${flowId}-${position}`, removeOnComplete: true },
        })),
      });
      await started;
      waiting.delete(parentId);
      return now() - startedAt;
    };
    try {
      for (let index = 0; index < WARMUP; index++) await oneFlow();
      for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
        const latencies: number[] = [];
        for (let index = 0; index < FLOWS_PER_REPETITION; index++) latencies.push(await oneFlow());
        const summary = latencySummary(latencies);
        report.sample('bullmq.flow.p50', summary.p50);
        report.sample('bullmq.flow.p99', summary.p99);
      }
    } finally {
      await Promise.all([children.close(), parents.close()]);
      await flows.close();
      await dropRedisKeys(connection, `${prefix}:`);
      connection.disconnect();
    }
  },
};
