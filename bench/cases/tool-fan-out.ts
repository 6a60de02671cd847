import type { Benchmark } from '../lib/benchmark';
import { CpuMeter } from '../lib/cpu-meter';
import { parallelCalculatorCalls, scriptedContent } from '../lib/scenario';
import { latencySummary } from '../lib/stats';
import { withSingleLane } from '../lib/single-lane';
import { phaseBreakdown } from '../lib/turn-phases';
import type { TurnTiming } from '../lib/turn-tracker';
import { WORKLOADS } from '../lib/workloads';

const { calls, turnsPerRepetition, turnsPerConversation, warmup } = WORKLOADS.toolFanOut;

/** (5) A step with parallel calls to a tool that returns at once: the fan-out and fan-in. */
export const toolFanOut: Benchmark = {
  name: 'tool-fan-out',
  title: `(5) Tool fan-out, ${calls} parallel calls`,
  kind: 'case',
  baselines: ['bullmq-flow'],
  timeoutMs: 120_000,
  async run(context, report) {
    report.define('tools.p50', {
      label: 'tool_processing_start → tool_processing_complete at the ws client, p50',
      unit: 'ms',
      baselineKey: 'bullmq.flow.p50',
      target: { goal: '(5)', on: 'ratio', op: '<=', value: 2 },
    });
    report.define('tools.p99', {
      label: 'tool_processing_start → tool_processing_complete at the ws client, p99',
      unit: 'ms',
      baselineKey: 'bullmq.flow.p99',
      target: { goal: '(5)', on: 'ratio', op: '<=', value: 2 },
    });
    report.define('tools.turn.p50', { label: 'POST → turn-finish (two completions and the tool phase), p50', unit: 'ms' });
    report.note(
      `all-in-one, default settings; ${turnsPerRepetition} sequential turns per repetition, a new conversation every ${turnsPerConversation}, each a step ` +
        `with ${calls} parallel \`calculator\` calls (builtin, returns at once) and a follow-up answering "ok".`,
    );
    await withSingleLane(context, { name: 'tool-fan-out', topology: 'all-in-one', turnsPerConversation }, async ({ stack, api, tracker, lane }) => {
      const content = scriptedContent(parallelCalculatorCalls(calls));
      const oneTurn = async () => {
        const timing = await tracker.runTurn(api, await lane.next(), content);
        if (timing.endType !== 'turn-finish') throw new Error(`a turn ended with ${timing.endType}`);
        if (timing.toolProcessingStartAt === undefined || timing.toolProcessingCompleteAt === undefined) {
          throw new Error('a turn finished without tool_processing_start and tool_processing_complete');
        }
        if (timing.toolsFailed) throw new Error(`${timing.toolsFailed} tool calls failed`);
        return timing;
      };
      for (let index = 0; index < warmup; index++) await oneTurn();
      const meter = await CpuMeter.start(stack.meteredProcesses());
      const timings: TurnTiming[] = [];
      for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
        const phases: number[] = [];
        const turns: number[] = [];
        for (let index = 0; index < turnsPerRepetition; index++) {
          const timing = await oneTurn();
          timings.push(timing);
          phases.push(timing.toolProcessingCompleteAt! - timing.toolProcessingStartAt!);
          turns.push(timing.endedAt! - timing.postedAt);
        }
        const summary = latencySummary(phases);
        report.sample('tools.p50', summary.p50);
        report.sample('tools.p99', summary.p99);
        report.sample('tools.turn.p50', latencySummary(turns).p50);
      }
      report.note(await meter.stop('CPU while measuring', { count: timings.length, unit: 'turn' }));
      report.note(phaseBreakdown(timings));
    });
  },
};
