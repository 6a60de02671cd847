import type { Benchmark } from '../lib/benchmark';
import { startRawFlow } from '../lib/raw-flow';
import { latencySummary } from '../lib/stats';
import { curveRepetitions, WORKLOADS } from '../lib/workloads';

const { calls, flowsPerRepetition, warmup } = WORKLOADS.toolCurve;

/** The raw BullMQ flow of (5) at each fan-out of the tool curve: a parent with 1, 8 or 32 children. */
export const bullmqFlowCurve: Benchmark = {
  name: 'bullmq-flow-curve',
  title: `Raw BullMQ: 1+N flow, N = ${calls.join(', ')}`,
  kind: 'baseline',
  timeoutMs: 120_000,
  async run(context, report) {
    const repetitions = curveRepetitions(context.options);
    for (const children of calls) {
      report.define(`bullmq.flow.c${children}.p50`, { label: `1+${children}: flow.add → parent processor starts, p50`, unit: 'ms' });
      report.define(`bullmq.flow.c${children}.p99`, { label: `1+${children}: flow.add → parent processor starts, p99`, unit: 'ms' });
    }
    report.note(
      `as "Raw BullMQ: 1+8 flow"; per fan-out ${warmup} flows of warm-up, then ${repetitions} repetition(s) of ${flowsPerRepetition} sequential flows ` +
        '(as many repetitions as the curve it is the baseline of).',
    );
    const flow = await startRawFlow(`${context.redisPrefix}-raw-flow-curve`);
    try {
      for (const children of calls) {
        for (let index = 0; index < warmup; index++) await flow.run(children);
        for (let repetition = 0; repetition < repetitions; repetition++) {
          const latencies: number[] = [];
          for (let index = 0; index < flowsPerRepetition; index++) latencies.push(await flow.run(children));
          const summary = latencySummary(latencies);
          report.sample(`bullmq.flow.c${children}.p50`, summary.p50);
          report.sample(`bullmq.flow.c${children}.p99`, summary.p99);
        }
      }
    } finally {
      await flow.close();
    }
  },
};
