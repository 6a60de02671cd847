import type { Benchmark } from '../lib/benchmark';
import { CpuMeter } from '../lib/cpu-meter';
import { parallelCalculatorCalls, scriptedContent } from '../lib/scenario';
import { latencySummary } from '../lib/stats';
import { withSingleLane } from '../lib/single-lane';
import { curveRepetitions, WORKLOADS } from '../lib/workloads';

const { calls, turnsPerRepetition, turnsPerConversation, warmup } = WORKLOADS.toolCurve;

/** How the tool step's cost grows with its parallel calls: (5) at 1, 8 and 32 calls, against the raw 1+N flow. */
export const toolFanOutCurve: Benchmark = {
  name: 'tool-fan-out-curve',
  title: `Curve: tool fan-out by parallel calls (${calls.join(', ')})`,
  kind: 'case',
  baselines: ['bullmq-flow-curve'],
  timeoutMs: (options) => 60_000 + calls.length * (warmup + curveRepetitions(options) * turnsPerRepetition) * 2_000,
  async run(context, report) {
    const repetitions = curveRepetitions(context.options);
    report.note(
      `all-in-one, default settings; as (5), per fan-out ${warmup} turns of warm-up, then ${repetitions} repetition(s) of ${turnsPerRepetition} sequential ` +
        `turns, a new conversation every ${turnsPerConversation}, each a step with N parallel \`calculator\` calls and a follow-up answering "ok" ` +
        "(MAX_TOOL_CALLS_PER_STEP is 32 by default). Each point's ratio is to the raw 1+N flow.",
    );
    for (const count of calls) {
      report.define(`curve.tools.c${count}.p50`, {
        label: `${callsLabel(count)}: tool_processing_start → tool_processing_complete, p50`,
        unit: 'ms',
        baselineKey: `bullmq.flow.c${count}.p50`,
      });
      report.define(`curve.tools.c${count}.p99`, {
        label: `${callsLabel(count)}: tool_processing_start → tool_processing_complete, p99`,
        unit: 'ms',
        baselineKey: `bullmq.flow.c${count}.p99`,
      });
      report.define(`curve.tools.c${count}.turn.p50`, { label: `${callsLabel(count)}: POST → turn-finish, p50`, unit: 'ms' });
    }
    const points = (key: (count: number) => string) => calls.map((count) => ({ x: count, key: key(count) }));
    report.curve({
      id: 'tool-fan-out',
      title: 'Tool phase by parallel calls, against the raw BullMQ 1+N flow (flow.add → parent starts)',
      x: { label: 'parallel tool calls in the step', log: true },
      y: { label: 'tool phase', unit: 'ms' },
      series: [
        { name: 'Switchyard p50', points: points((count) => `curve.tools.c${count}.p50`) },
        { name: 'raw flow p50', points: points((count) => `bullmq.flow.c${count}.p50`) },
        { name: 'Switchyard p99', points: points((count) => `curve.tools.c${count}.p99`) },
        { name: 'raw flow p99', points: points((count) => `bullmq.flow.c${count}.p99`) },
      ],
    });

    await withSingleLane(context, { name: 'tool-fan-out-curve', topology: 'all-in-one', turnsPerConversation }, async ({ stack, api, tracker, lane }) => {
      for (const count of calls) {
        const content = scriptedContent(parallelCalculatorCalls(count));
        const oneTurn = async () => {
          const timing = await tracker.runTurn(api, await lane.next(), content);
          if (timing.endType !== 'turn-finish') throw new Error(`a turn with ${count} calls ended with ${timing.endType}`);
          if (timing.toolProcessingStartAt === undefined || timing.toolProcessingCompleteAt === undefined) {
            throw new Error('a turn finished without tool_processing_start and tool_processing_complete');
          }
          if (timing.toolsFailed) throw new Error(`${timing.toolsFailed} of ${count} tool calls failed`);
          return timing;
        };
        for (let index = 0; index < warmup; index++) await oneTurn();
        const meter = await CpuMeter.start(stack.meteredProcesses());
        for (let repetition = 0; repetition < repetitions; repetition++) {
          const phases: number[] = [];
          const turns: number[] = [];
          for (let index = 0; index < turnsPerRepetition; index++) {
            const timing = await oneTurn();
            phases.push(timing.toolProcessingCompleteAt! - timing.toolProcessingStartAt!);
            turns.push(timing.endedAt! - timing.postedAt);
          }
          const summary = latencySummary(phases);
          report.sample(`curve.tools.c${count}.p50`, summary.p50);
          report.sample(`curve.tools.c${count}.p99`, summary.p99);
          report.sample(`curve.tools.c${count}.turn.p50`, latencySummary(turns).p50);
        }
        report.note(`${callsLabel(count)}: ${await meter.stop('CPU while measuring', { count: repetitions * turnsPerRepetition, unit: 'turn' })}`);
      }
    });
  },
};

const callsLabel = (count: number) => `${count} call${count === 1 ? '' : 's'}`;
