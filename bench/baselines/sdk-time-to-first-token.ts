import type { Benchmark } from '../lib/benchmark';
import { createDirectClient, streamDirect } from '../lib/direct-stream';
import { fillerTokens } from '../lib/scenario';
import { latencySummary } from '../lib/stats';
import { WORKLOADS } from '../lib/workloads';

const { tokens, turnsPerRepetition, warmup } = WORKLOADS.ttft;

/** The `openai` SDK's own time to first token against the scripted model, one request at a time. */
export const sdkTimeToFirstToken: Benchmark = {
  name: 'sdk-ttft',
  title: 'Direct SDK: time to first token (sequential)',
  kind: 'baseline',
  timeoutMs: 60_000,
  async run(context, report) {
    report.define('sdk.ttft.p50', { label: 'time to first token, p50', unit: 'ms' });
    report.define('sdk.ttft.p99', { label: 'time to first token, p99', unit: 'ms' });
    report.note(`${turnsPerRepetition} sequential streams of ${tokens} tokens per repetition; request sent → first chunk with text parsed by the SDK.`);
    const client = createDirectClient(context.scriptedModelUrl);
    for (let index = 0; index < warmup; index++) await streamDirect(client, fillerTokens(tokens));
    for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
      const latencies: number[] = [];
      for (let index = 0; index < turnsPerRepetition; index++) {
        const timing = await streamDirect(client, fillerTokens(tokens));
        latencies.push(timing.firstTokenAt! - timing.startedAt);
      }
      const summary = latencySummary(latencies);
      report.sample('sdk.ttft.p50', summary.p50);
      report.sample('sdk.ttft.p99', summary.p99);
    }
  },
};
