import type { Benchmark } from '../lib/benchmark';
import { CpuMeter } from '../lib/cpu-meter';
import { now } from '../lib/clock';
import { createDirectClient, streamDirect } from '../lib/direct-stream';
import { fillerTokens } from '../lib/scenario';
import { latencySummary } from '../lib/stats';
import { WORKLOADS } from '../lib/workloads';

const { streams, tokens } = WORKLOADS.concurrent;

/** The `openai` SDK reading many answers at once, all from this one process. */
export const sdkConcurrentStreams: Benchmark = {
  name: 'sdk-concurrent',
  title: `Direct SDK: ${streams} concurrent streams`,
  kind: 'baseline',
  timeoutMs: 90_000,
  async run(context, report) {
    report.define('sdk.concurrent.tokensPerSecond', { label: 'aggregate tokens/s (all scenario tokens ÷ first request → last text chunk)', unit: 'tokens/s' });
    report.define('sdk.concurrent.ttft.p50', { label: 'time to first token, p50', unit: 'ms' });
    report.define('sdk.concurrent.ttft.p99', { label: 'time to first token, p99', unit: 'ms' });
    report.note(`${streams} streams of ${tokens} tokens started together, in one process, one repetition = one batch.`);
    const client = createDirectClient(context.scriptedModelUrl);
    // One untimed batch: opens the connection pool and warms the JIT on both sides.
    await Promise.all(Array.from({ length: streams }, () => streamDirect(client, fillerTokens(tokens))));
    const meter = await CpuMeter.start([{ name: 'scripted model', pid: context.scriptedModelPid }]);
    for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
      const startedAt = now();
      const timings = await Promise.all(Array.from({ length: streams }, () => streamDirect(client, fillerTokens(tokens))));
      const lastTokenAt = Math.max(...timings.map((timing) => timing.lastTokenAt!));
      report.sample('sdk.concurrent.tokensPerSecond', (streams * tokens) / ((lastTokenAt - startedAt) / 1000));
      const ttft = latencySummary(timings.map((timing) => timing.firstTokenAt! - timing.startedAt));
      report.sample('sdk.concurrent.ttft.p50', ttft.p50);
      report.sample('sdk.concurrent.ttft.p99', ttft.p99);
    }
    report.note(
      await meter.stop('CPU while measuring (the bench client is the SDK)', {
        count: (context.options.repetitions * streams * tokens) / 1000,
        unit: '1,000 tokens',
      }),
    );
  },
};
