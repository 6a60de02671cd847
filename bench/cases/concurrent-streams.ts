import { ApiClient } from '../lib/api-client';
import type { Benchmark, ReportBuilder } from '../lib/benchmark';
import { now } from '../lib/clock';
import { ConversationLane } from '../lib/conversation-lane';
import { CpuMeter } from '../lib/cpu-meter';
import { createDirectClient, streamDirect } from '../lib/direct-stream';
import type { RunContext } from '../lib/run-context';
import { fillerTokens, scriptedContent } from '../lib/scenario';
import { latencySummary } from '../lib/stats';
import { startSwitchyard, type Topology } from '../lib/switchyard-stack';
import { connectMany } from '../lib/timed-ws-client';
import { TurnTracker } from '../lib/turn-tracker';
import { WORKLOADS } from '../lib/workloads';

const { streams, tokens } = WORKLOADS.concurrent;

/**
 * (3) Many turns at once, each followed by its own websocket client. The target is the
 * all-in-one; one API with two workers is measured beside it, because one process streaming
 * everything can use one of the two cores at most.
 */
export const concurrentStreams: Benchmark = {
  name: 'concurrent-streams',
  title: `(3) ${streams} concurrent streams`,
  kind: 'case',
  baselines: ['sdk-concurrent'],
  timeoutMs: 240_000,
  async run(context, report) {
    report.note(
      `${streams} websocket clients, each following its own conversation (a new one every repetition); per repetition all ${streams} turns ` +
        `(${tokens} tokens each, no pauses) are POSTed at once. WORKER_CONCURRENCY is raised so that every turn runs at once (the default 50 per process would queue half of them in the all-in-one).`,
    );
    // What a complete answer looks like, to check every stream got all of it.
    const expectedChars = (await streamDirect(createDirectClient(context.scriptedModelUrl), fillerTokens(tokens))).textChars;
    await measure(context, report, { topology: 'all-in-one', key: 'aio', label: 'all-in-one', workerConcurrency: streams, expectedChars });
    await measure(context, report, { topology: 'api-and-workers', key: 'split', label: '1 API + 2 workers', workerConcurrency: streams / 2, expectedChars });
  },
};

async function measure(
  context: RunContext,
  report: ReportBuilder,
  input: { topology: Topology; key: string; label: string; workerConcurrency: number; expectedChars: number },
): Promise<void> {
  const { key, label } = input;
  const aio = input.topology === 'all-in-one';
  report.define(`concurrent.${key}.tokensPerSecond`, {
    label: `${label}: aggregate tokens/s delivered (all scenario tokens ÷ first POST → last text-delta)`,
    unit: 'tokens/s',
    baselineKey: 'sdk.concurrent.tokensPerSecond',
    ...(aio ? { target: { goal: '(3)', on: 'ratio', op: '>=', value: 0.6 } as const } : {}),
  });
  report.define(`concurrent.${key}.ttft.p50`, { label: `${label}: POST → first text-delta, p50`, unit: 'ms', baselineKey: 'sdk.concurrent.ttft.p50' });
  report.define(`concurrent.${key}.ttft.p99`, { label: `${label}: POST → first text-delta, p99`, unit: 'ms', baselineKey: 'sdk.concurrent.ttft.p99' });
  report.define(`concurrent.${key}.turn.p99`, { label: `${label}: POST → turn-finish, p99`, unit: 'ms' });
  const stack = await startSwitchyard(context, {
    name: `concurrent-${key}`,
    topology: input.topology,
    workers: 2,
    env: { WORKER_CONCURRENCY: String(input.workerConcurrency) },
  });
  const api = new ApiClient(stack.url, stack.apiKey);
  const clients = await connectMany(stack.url, stack.apiKey, streams);
  try {
    const tracker = new TurnTracker();
    const lanes = clients.map((client) => {
      tracker.listen(client);
      return new ConversationLane(client, api, 1);
    });
    const content = scriptedContent(fillerTokens(tokens));
    // A small untimed batch: pools, JIT, prepared statements.
    await Promise.all(lanes.slice(0, 10).map(async (lane) => tracker.runTurn(api, await lane.next(), content)));

    const meter = await CpuMeter.start(stack.meteredProcesses());
    for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
      // Fresh conversations, made and subscribed before the clock starts.
      const conversations = await Promise.all(lanes.map((lane) => lane.next()));
      const startedAt = now();
      const timings = await Promise.all(conversations.map((id) => tracker.runTurn(api, id, content, 120_000)));
      const failures = timings.filter((timing) => timing.endType !== 'turn-finish').length;
      if (failures > 0) throw new Error(`${label}: ${failures} turns did not finish`);
      const lastDeltaAt = Math.max(...timings.map((timing) => timing.lastDeltaAt!));
      report.sample(`concurrent.${key}.tokensPerSecond`, (streams * tokens) / ((lastDeltaAt - startedAt) / 1000));
      const ttft = latencySummary(timings.map((timing) => timing.firstDeltaAt! - timing.postedAt));
      report.sample(`concurrent.${key}.ttft.p50`, ttft.p50);
      report.sample(`concurrent.${key}.ttft.p99`, ttft.p99);
      report.sample(`concurrent.${key}.turn.p99`, latencySummary(timings.map((timing) => timing.endedAt! - timing.postedAt)).p99);
      const incomplete = timings.filter((timing) => timing.textChars !== input.expectedChars).length;
      if (incomplete > 0) report.note(`${label}, repetition ${repetition + 1}: ${incomplete} streams did not receive exactly ${input.expectedChars} characters`);
    }
    report.note(
      `${label} (WORKER_CONCURRENCY=${input.workerConcurrency}): ` +
        (await meter.stop('CPU while measuring', { count: (context.options.repetitions * streams * tokens) / 1000, unit: '1,000 tokens' })),
    );
    const errors = clients.flatMap((client) => client.errors);
    if (errors.length > 0) report.note(`${label}: websocket error frames: ${errors.length} (${errors[0]})`);
  } finally {
    await Promise.all(clients.map((client) => client.close()));
    api.close();
    await stack.stop();
  }
}
