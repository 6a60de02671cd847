import type { Benchmark } from '../lib/benchmark';
import { CpuMeter } from '../lib/cpu-meter';
import { createDirectClient, streamDirect } from '../lib/direct-stream';
import { fillerTokens } from '../lib/scenario';
import { WORKLOADS } from '../lib/workloads';

const { tokens, warmup } = WORKLOADS.singleStream;

/** The `openai` SDK reading one long answer at full speed. */
export const sdkSingleStream: Benchmark = {
  name: 'sdk-single-stream',
  title: `Direct SDK: one ${tokens}-token stream`,
  kind: 'baseline',
  timeoutMs: 60_000,
  async run(context, report) {
    report.define('sdk.single.tokensPerSecond', { label: 'tokens/s (scenario tokens ÷ request → last text chunk)', unit: 'tokens/s' });
    report.define('sdk.single.charsPerSecond', { label: 'characters/s (request → last text chunk)', unit: 'chars/s' });
    report.define('sdk.single.firstToLast', { label: 'tokens/s (scenario tokens ÷ first → last text chunk)', unit: 'tokens/s' });
    report.define('sdk.single.firstTokenMs', { label: 'request → first text chunk', unit: 'ms' });
    report.define('sdk.single.totalMs', { label: 'request → stream end', unit: 'ms' });
    report.define('sdk.single.textChars', { label: 'characters of text received', unit: 'chars' });
    const client = createDirectClient(context.scriptedModelUrl);
    for (let index = 0; index < warmup; index++) await streamDirect(client, fillerTokens(tokens));
    const meter = await CpuMeter.start([{ name: 'scripted model', pid: context.scriptedModelPid }]);
    for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
      const timing = await streamDirect(client, fillerTokens(tokens));
      const seconds = (timing.lastTokenAt! - timing.startedAt) / 1000;
      report.sample('sdk.single.tokensPerSecond', tokens / seconds);
      report.sample('sdk.single.charsPerSecond', timing.textChars / seconds);
      report.sample('sdk.single.firstToLast', tokens / ((timing.lastTokenAt! - timing.firstTokenAt!) / 1000));
      report.sample('sdk.single.firstTokenMs', timing.firstTokenAt! - timing.startedAt);
      report.sample('sdk.single.totalMs', timing.endedAt - timing.startedAt);
      report.sample('sdk.single.textChars', timing.textChars);
    }
    report.note(await meter.stop('CPU while measuring (the bench client is the SDK)', { count: (context.options.repetitions * tokens) / 1000, unit: '1,000 tokens' }));
  },
};
