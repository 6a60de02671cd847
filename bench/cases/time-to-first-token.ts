import { ApiClient } from '../lib/api-client';
import type { Benchmark } from '../lib/benchmark';
import { ConversationLane } from '../lib/conversation-lane';
import { CpuMeter } from '../lib/cpu-meter';
import { fillerTokens, scriptedContent } from '../lib/scenario';
import { latencySummary } from '../lib/stats';
import { startSwitchyard } from '../lib/switchyard-stack';
import { TimedWsClient } from '../lib/timed-ws-client';
import { phaseBreakdown } from '../lib/turn-phases';
import { TurnTracker, type TurnTiming } from '../lib/turn-tracker';
import { WORKLOADS } from '../lib/workloads';

const { tokens, turnsPerRepetition, turnsPerConversation, warmup } = WORKLOADS.ttft;

/**
 * (1) POST a turn → its first text-delta at a subscribed websocket client, one turn at a
 * time, minus the direct SDK's time to first token for the same answer.
 */
export const timeToFirstToken: Benchmark = {
  name: 'ttft',
  title: '(1) Time to first token overhead, light load',
  kind: 'case',
  baselines: ['sdk-ttft', 'redis-pubsub'],
  timeoutMs: 180_000,
  async run(context, report) {
    report.define('ttft.overhead.p50', {
      label: 'p50 overhead (Switchyard TTFT p50 − direct SDK TTFT p50)',
      unit: 'ms',
      target: { goal: '(1)', on: 'value', op: '<=', value: 3 },
    });
    report.define('ttft.overhead.p99', {
      label: 'p99 overhead (Switchyard TTFT p99 − direct SDK TTFT p99)',
      unit: 'ms',
      target: { goal: '(1)', on: 'value', op: '<=', value: 15 },
    });
    report.define('ttft.p50', { label: 'POST turn → first text-delta at the ws client, p50', unit: 'ms', baselineKey: 'sdk.ttft.p50' });
    report.define('ttft.p99', { label: 'POST turn → first text-delta at the ws client, p99', unit: 'ms', baselineKey: 'sdk.ttft.p99' });
    report.define('ttft.turn.p50', { label: 'POST turn → turn-finish at the ws client, p50', unit: 'ms' });
    report.note(
      `all-in-one, default settings; ${turnsPerRepetition} sequential turns of ${tokens} tokens per repetition, followed on one websocket, ` +
        `a new conversation every ${turnsPerConversation} turns (made and subscribed before the timed POST); ` +
        `overhead = each repetition's percentile − the median of the baseline's.`,
    );
    const stack = await startSwitchyard(context, { name: 'ttft', topology: 'all-in-one' });
    const api = new ApiClient(stack.url, stack.apiKey);
    const client = await TimedWsClient.connect(stack.url, stack.apiKey);
    try {
      const tracker = new TurnTracker();
      tracker.listen(client);
      const lane = new ConversationLane(client, api, turnsPerConversation);
      const content = scriptedContent(fillerTokens(tokens));
      const oneTurn = async () => tracker.runTurn(api, await lane.next(), content);
      for (let index = 0; index < warmup; index++) await oneTurn();

      const meter = await CpuMeter.start(stack.meteredProcesses());
      const timings: TurnTiming[] = [];
      const baselineP50 = context.baseline('sdk.ttft.p50')?.median ?? Number.NaN;
      const baselineP99 = context.baseline('sdk.ttft.p99')?.median ?? Number.NaN;
      for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
        const firstToken: number[] = [];
        const whole: number[] = [];
        for (let index = 0; index < turnsPerRepetition; index++) {
          const timing = await oneTurn();
          timings.push(timing);
          if (timing.endType !== 'turn-finish' || timing.firstDeltaAt === undefined) throw new Error(`a turn ended with ${timing.endType}`);
          firstToken.push(timing.firstDeltaAt - timing.postedAt);
          whole.push(timing.endedAt! - timing.postedAt);
        }
        const summary = latencySummary(firstToken);
        report.sample('ttft.p50', summary.p50);
        report.sample('ttft.p99', summary.p99);
        report.sample('ttft.overhead.p50', summary.p50 - baselineP50);
        report.sample('ttft.overhead.p99', summary.p99 - baselineP99);
        report.sample('ttft.turn.p50', latencySummary(whole).p50);
      }
      report.note(await meter.stop('CPU while measuring', { count: timings.length, unit: 'turn' }));
      report.note(phaseBreakdown(timings));
      if (client.errors.length > 0) report.note(`websocket error frames: ${client.errors.slice(0, 3).join('; ')}`);
    } finally {
      await client.close();
      api.close();
      await stack.stop();
    }
  },
};
