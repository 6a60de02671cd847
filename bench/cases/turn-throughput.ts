import { ApiClient } from '../lib/api-client';
import type { Benchmark, ReportBuilder } from '../lib/benchmark';
import { runClosedLoop } from '../lib/closed-loop';
import { ConversationLane } from '../lib/conversation-lane';
import { CpuMeter } from '../lib/cpu-meter';
import type { RunContext } from '../lib/run-context';
import { fillerTokens, scriptedContent } from '../lib/scenario';
import { latencySummary } from '../lib/stats';
import { startSwitchyard, type Topology } from '../lib/switchyard-stack';
import { TimedWsClient } from '../lib/timed-ws-client';
import { phaseBreakdown } from '../lib/turn-phases';
import { TurnTracker, type TurnTiming } from '../lib/turn-tracker';
import { WORKLOADS } from '../lib/workloads';

const { tokens, turnsPerConversation, warmupSeconds } = WORKLOADS.turnThroughput;

/**
 * (4) Short turns without tools, as many as a closed loop gets through, in the all-in-one and
 * (10) in 2 API + 2 worker processes (lanes spread over both APIs, each lane's websocket on the
 * gateway of the API it posts to), with the all-in-one figure of the same run as its baseline.
 */
export const turnThroughput: Benchmark = {
  name: 'turn-throughput',
  title: '(4) Turn throughput, short answers',
  kind: 'case',
  baselines: ['bullmq-job'],
  timeoutMs: 240_000,
  async run(context, report) {
    const { turnSeconds, turnConcurrency } = context.options;
    report.note(
      `closed loop: ${turnConcurrency} lanes, each with its own websocket client, each posting its next turn (${tokens} tokens, no tools, ` +
        `no pauses) as soon as the previous one's turn-finish arrived, on a new conversation every ${turnsPerConversation} turns (made inside the measured time); ` +
        `${turnSeconds} s of load per repetition (the issue says 30 s; shortened to keep the suite within its time budget, --turn-seconds 30 restores it) ` +
        `after ${warmupSeconds} s of warm-up. turns/s = turns finished ÷ time until the last of them finished.`,
    );
    await measure(context, report, { topology: 'all-in-one' }, 'aio', 'all-in-one');
    await measure(context, report, { topology: 'api-and-workers', apis: 2, workers: 2 }, 'split', '(10) 2 API + 2 workers');
  },
};

async function measure(context: RunContext, report: ReportBuilder, deployment: { topology: Topology; apis?: number; workers?: number }, key: string, label: string): Promise<void> {
  const { turnSeconds, turnConcurrency } = context.options;
  const aio = deployment.topology === 'all-in-one';
  report.define(`turns.${key}.perSecond`, {
    label: `${label}: turns/s`,
    unit: 'turns/s',
    ...(aio ? { target: { goal: '(4)', on: 'value', op: '>=', value: 300 } as const } : { baselineKey: 'turns.aio.perSecond' }),
  });
  report.define(`turns.${key}.p50`, { label: `${label}: POST → turn-finish, p50`, unit: 'ms', baselineKey: 'bullmq.job.p50' });
  report.define(`turns.${key}.p99`, {
    label: `${label}: POST → turn-finish, p99`,
    unit: 'ms',
    baselineKey: 'bullmq.job.p99',
    ...(aio ? { target: { goal: '(4)', on: 'value', op: '<=', value: 100 } as const } : {}),
  });
  const stack = await startSwitchyard(context, { name: `turns-${key}`, ...deployment });
  const apis = stack.urls.map((url) => new ApiClient(url, stack.apiKey));
  const clients: TimedWsClient[] = [];
  try {
    const tracker = new TurnTracker();
    const lanes: ConversationLane[] = [];
    for (let lane = 0; lane < turnConcurrency; lane++) {
      const side = lane % stack.urls.length;
      const client = await TimedWsClient.connect(stack.urls[side]!, stack.apiKey);
      clients.push(client);
      tracker.listen(client);
      lanes.push(new ConversationLane(client, apis[side]!, turnsPerConversation));
    }
    const content = scriptedContent(fillerTokens(tokens));
    await runClosedLoop({ tracker, lanes, content, durationMs: warmupSeconds * 1000 });
    const meter = await CpuMeter.start(stack.meteredProcesses());
    const timings: TurnTiming[] = [];
    for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
      const result = await runClosedLoop({ tracker, lanes, content, durationMs: turnSeconds * 1000 });
      timings.push(...result.timings);
      const summary = latencySummary(result.latencies);
      report.sample(`turns.${key}.perSecond`, result.latencies.length / (result.elapsedMs / 1000));
      report.sample(`turns.${key}.p50`, summary.p50);
      report.sample(`turns.${key}.p99`, summary.p99);
      if (result.failures > 0) report.note(`${label}, repetition ${repetition + 1}: ${result.failures} turns failed (first: ${result.firstFailure})`);
    }
    report.note(`${label}: ${await meter.stop('CPU while measuring', { count: timings.length, unit: 'turn' })}`);
    report.note(`${label}: ${phaseBreakdown(timings)}`);
  } finally {
    await Promise.all(clients.map((client) => client.close()));
    for (const api of apis) api.close();
    await stack.stop();
  }
}
