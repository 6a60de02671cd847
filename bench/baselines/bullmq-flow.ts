import type { Benchmark } from '../lib/benchmark';
import { startRawFlow } from '../lib/raw-flow';
import { latencySummary } from '../lib/stats';
import { WORKLOADS } from '../lib/workloads';

const FLOWS_PER_REPETITION = 60;
const WARMUP = 10;
const { calls } = WORKLOADS.toolFanOut;

/** The raw BullMQ flow of (5): a parent with `calls` children, timed until the parent's worker starts it. */
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
    const flow = await startRawFlow(`${context.redisPrefix}-raw-flow`);
    try {
      for (let index = 0; index < WARMUP; index++) await flow.run(calls);
      for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
        const latencies: number[] = [];
        for (let index = 0; index < FLOWS_PER_REPETITION; index++) latencies.push(await flow.run(calls));
        const summary = latencySummary(latencies);
        report.sample('bullmq.flow.p50', summary.p50);
        report.sample('bullmq.flow.p99', summary.p99);
      }
    } finally {
      await flow.close();
    }
  },
};
