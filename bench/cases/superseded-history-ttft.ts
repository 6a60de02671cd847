import type { Benchmark } from '../lib/benchmark';
import { CpuMeter } from '../lib/cpu-meter';
import { fillerTokens, scriptedContent } from '../lib/scenario';
import { historyText, insertHistory } from '../lib/stack-seed';
import { latencySummary } from '../lib/stats';
import { firstTokenMs } from '../lib/turn-tracker';
import { curveRepetitions, WORKLOADS } from '../lib/workloads';
import { withTimedStack } from '../lib/single-lane';

const { storedMessages, tokens, turnsPerRepetition, messageChars } = WORKLOADS.supersededCurve;

/**
 * Whether messages that edits and regenerates replaced cost the turns that follow: POST → first
 * text-delta on conversations whose path is N messages long, one with nothing superseded and one
 * with N superseded messages among the path's (as many regenerates and edits leave them),
 * timed in turn; then a regenerate on the second (its admission marks the answer it replaces).
 */
export const supersededHistoryTimeToFirstToken: Benchmark = {
  name: 'superseded-history-ttft',
  title: 'Curve: time to first token by stored messages, with and without superseded messages',
  kind: 'case',
  timeoutMs: (options) => 60_000 + storedMessages.length * curveRepetitions(options) * turnsPerRepetition * 3 * 2_000,
  async run(context, report) {
    const repetitions = curveRepetitions(context.options);
    report.note(
      `all-in-one, default settings; per point ${repetitions} repetition(s) of ${turnsPerRepetition} pairs of conversations whose path ` +
        `is exactly N messages when timed: N − 2 messages of ${messageChars} characters (user and assistant in turn) inserted straight into ` +
        'the schema, then one untimed turn. The second of each pair also stores N − 2 superseded messages, two after every two of the path ' +
        '(twice the rows, half of them off the path). A turn of ' +
        tokens +
        ' tokens on each of a pair, in turn, then a timed regenerate ' +
        'on the second.',
    );
    for (const count of storedMessages) {
      const label = `${count.toLocaleString('en-US')} messages on the path`;
      report.define(`curve.superseded.m${count}.none.p50`, { label: `${label}, none superseded: POST → first text-delta, p50`, unit: 'ms' });
      report.define(`curve.superseded.m${count}.same.p50`, {
        label: `${label}, as many superseded: POST → first text-delta, p50`,
        unit: 'ms',
        baselineKey: `curve.superseded.m${count}.none.p50`,
      });
      report.define(`curve.superseded.m${count}.regenerate.p50`, {
        label: `${label}, as many superseded: a regenerate, POST → first text-delta, p50`,
        unit: 'ms',
        baselineKey: `curve.superseded.m${count}.none.p50`,
      });
    }
    const points = (key: string) => storedMessages.map((count) => ({ x: count, key: `curve.superseded.m${count}.${key}` }));
    report.curve({
      id: 'superseded-history-ttft',
      title: 'Time to first token by messages on the path, with and without superseded messages',
      x: { label: 'messages on the path', log: true },
      y: { label: 'time to first token', unit: 'ms', log: true },
      series: [
        { name: 'p50, nothing superseded', points: points('none.p50') },
        { name: 'p50, as many superseded', points: points('same.p50') },
        { name: 'p50 of a regenerate, as many superseded', points: points('regenerate.p50') },
      ],
    });

    await withTimedStack(context, { name: 'superseded-history-ttft', topology: 'all-in-one' }, async ({ stack, api, client, tracker }) => {
      const content = scriptedContent(fillerTokens(tokens));
      const turn = async (conversationId: string, options?: Record<string, unknown>) =>
        firstTokenMs(await tracker.runTurn(api, conversationId, options?.regenerate ? undefined : content, undefined, options));
      for (const count of storedMessages) {
        const pairs = repetitions * turnsPerRepetition;
        const plain: string[] = [];
        const branched: string[] = [];
        for (let index = 0; index < pairs; index++) {
          plain.push(await api.createConversation());
          branched.push(await api.createConversation());
        }
        const path = Array.from({ length: count - 2 }, (_unused, index) => historyText(index, messageChars));
        await insertHistory(stack.schema, plain, path);
        // Two superseded after every two of the path: a user message and its answer replaced, as an edit leaves them.
        const withReplaced = path.flatMap((text, index) => (index % 2 === 1 ? [text, `${path[index - 1]} (replaced)`, `${text} (replaced)`] : [text]));
        const superseded = path.flatMap((_text, index) => (index % 2 === 1 ? [false, true, true] : [false]));
        await insertHistory(stack.schema, branched, withReplaced, superseded);
        for (const conversationId of [...plain, ...branched]) {
          await client.subscribe(conversationId);
          await turn(conversationId);
        }

        const meter = await CpuMeter.start(stack.meteredProcesses());
        for (let repetition = 0; repetition < repetitions; repetition++) {
          const none: number[] = [];
          const same: number[] = [];
          const regenerate: number[] = [];
          for (let index = repetition * turnsPerRepetition; index < (repetition + 1) * turnsPerRepetition; index++) {
            none.push(await turn(plain[index]!));
            same.push(await turn(branched[index]!));
          }
          for (let index = repetition * turnsPerRepetition; index < (repetition + 1) * turnsPerRepetition; index++) {
            regenerate.push(await turn(branched[index]!, { regenerate: true }));
          }
          report.sample(`curve.superseded.m${count}.none.p50`, latencySummary(none).p50);
          report.sample(`curve.superseded.m${count}.same.p50`, latencySummary(same).p50);
          report.sample(`curve.superseded.m${count}.regenerate.p50`, latencySummary(regenerate).p50);
        }
        report.note(`${count.toLocaleString('en-US')} messages on the path: ${await meter.stop('CPU while measuring')}`);
        for (const conversationId of [...plain, ...branched]) client.unsubscribe(conversationId);
      }
      if (client.errors.length > 0) report.note(`websocket error frames: ${client.errors.slice(0, 3).join('; ')}`);
    });
  },
};
