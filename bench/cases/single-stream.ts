import { ApiClient } from '../lib/api-client';
import type { Benchmark, ReportBuilder } from '../lib/benchmark';
import { CpuMeter } from '../lib/cpu-meter';
import type { RunContext } from '../lib/run-context';
import { fillerTokens, scriptedContent } from '../lib/scenario';
import { startSwitchyard, type Topology } from '../lib/switchyard-stack';
import { TimedWsClient } from '../lib/timed-ws-client';
import { TurnTracker } from '../lib/turn-tracker';
import { WORKLOADS } from '../lib/workloads';

const { tokens, warmup } = WORKLOADS.singleStream;

/**
 * (2) One long answer at full speed, as one websocket client receives it. The target is the
 * all-in-one; one API with one worker is measured beside it, where the gateway does not share
 * an event loop with the worker that parses the stream.
 */
export const singleStream: Benchmark = {
  name: 'single-stream',
  title: `(2) Single-stream throughput, ${tokens} tokens`,
  kind: 'case',
  baselines: ['sdk-single-stream', 'peer-single-stream'],
  timeoutMs: 180_000,
  async run(context, report) {
    report.note(`one turn of ${tokens} filler tokens with no pause per repetition, a new conversation each time; default settings.`);
    report.note(
      "The target uses scenario tokens ÷ (request sent → last text received) on both sides. The issue's other definition, first → last " +
        'text-delta, is shown but not used: Switchyard merges the deltas of a fast stream into a handful of events (see "text-delta events ' +
        'received"), so its first delta can arrive just before its last one and that rate then measures nothing but the merge.',
    );
    await measure(context, report, 'all-in-one', 'aio', 'all-in-one');
    await measure(context, report, 'api-and-workers', 'split', '1 API + 1 worker');
  },
};

async function measure(context: RunContext, report: ReportBuilder, topology: Topology, key: string, label: string): Promise<void> {
  const aio = topology === 'all-in-one';
  report.define(`single.${key}.tokensPerSecond`, {
    label: `${label}: tokens/s at the ws client (scenario tokens ÷ POST → last text-delta)`,
    unit: 'tokens/s',
    baselineKey: 'sdk.single.tokensPerSecond',
    ...(aio ? { target: { goal: '(2)', on: 'ratio', op: '>=', value: 0.8 } as const } : {}),
  });
  report.define(`single.${key}.vsPeer.tokensPerSecond`, {
    label: `${label}: tokens/s at the ws client, against the AI SDK + resumable-stream peer's tokens/s at its client`,
    unit: 'tokens/s',
    baselineKey: 'peer.single.tokensPerSecond',
    ...(aio ? { target: { goal: '(2) peer', on: 'ratio', op: '>=', value: 1 } as const } : {}),
  });
  report.define(`single.${key}.vsPeer.firstDeltaMs`, {
    label: `${label}: POST turn → first text-delta, against the peer's POST → first text-delta`,
    unit: 'ms',
    baselineKey: 'peer.single.firstTokenMs',
  });
  report.define(`single.${key}.charsPerSecond`, { label: `${label}: characters/s (POST → last text-delta)`, unit: 'chars/s', baselineKey: 'sdk.single.charsPerSecond' });
  report.define(`single.${key}.firstToLast`, {
    label: `${label}: tokens/s, first → last text-delta (the issue's other definition, see notes)`,
    unit: 'tokens/s',
    baselineKey: 'sdk.single.firstToLast',
  });
  report.define(`single.${key}.firstDeltaMs`, { label: `${label}: POST turn → first text-delta`, unit: 'ms', baselineKey: 'sdk.single.firstTokenMs' });
  report.define(`single.${key}.totalMs`, { label: `${label}: POST turn → turn-finish`, unit: 'ms', baselineKey: 'sdk.single.totalMs' });
  report.define(`single.${key}.deltaEvents`, { label: `${label}: text-delta events received (merged deltas)`, unit: 'events' });
  report.define(`single.${key}.textChars`, { label: `${label}: characters of text received`, unit: 'chars', baselineKey: 'sdk.single.textChars' });
  const stack = await startSwitchyard(context, { name: `single-${key}`, topology, workers: 1 });
  const api = new ApiClient(stack.url, stack.apiKey);
  const client = await TimedWsClient.connect(stack.url, stack.apiKey);
  try {
    const tracker = new TurnTracker();
    tracker.listen(client);
    const content = scriptedContent(fillerTokens(tokens));
    const oneTurn = async () => {
      const conversationId = await api.createConversation();
      await client.subscribe(conversationId);
      const timing = await tracker.runTurn(api, conversationId, content);
      client.unsubscribe(conversationId);
      if (timing.endType !== 'turn-finish') throw new Error(`the turn ended with ${timing.endType}`);
      return timing;
    };
    for (let index = 0; index < warmup; index++) await oneTurn();
    const meter = await CpuMeter.start(stack.meteredProcesses());
    const expectedChars = context.baseline('sdk.single.textChars')?.median;
    for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
      const timing = await oneTurn();
      const seconds = (timing.lastDeltaAt! - timing.postedAt) / 1000;
      report.sample(`single.${key}.tokensPerSecond`, tokens / seconds);
      report.sample(`single.${key}.vsPeer.tokensPerSecond`, tokens / seconds);
      report.sample(`single.${key}.vsPeer.firstDeltaMs`, timing.firstDeltaAt! - timing.postedAt);
      report.sample(`single.${key}.charsPerSecond`, timing.textChars / seconds);
      report.sample(`single.${key}.firstToLast`, tokens / ((timing.lastDeltaAt! - timing.firstDeltaAt!) / 1000));
      report.sample(`single.${key}.firstDeltaMs`, timing.firstDeltaAt! - timing.postedAt);
      report.sample(`single.${key}.totalMs`, timing.endedAt! - timing.postedAt);
      report.sample(`single.${key}.deltaEvents`, timing.deltaEvents);
      report.sample(`single.${key}.textChars`, timing.textChars);
      if (expectedChars !== undefined && timing.textChars !== expectedChars) {
        report.note(`${label}, repetition ${repetition + 1}: received ${timing.textChars} characters, the direct SDK ${expectedChars}`);
      }
    }
    report.note(`${label}: ${await meter.stop('CPU while measuring', { count: (context.options.repetitions * tokens) / 1000, unit: '1,000 tokens' })}`);
  } finally {
    await client.close();
    api.close();
    await stack.stop();
  }
}
