import type OpenAI from 'openai';
import type { Benchmark } from '../lib/benchmark';
import { CpuMeter } from '../lib/cpu-meter';
import { createDirectClient, streamDirect } from '../lib/direct-stream';
import { fillerTokens, scriptedContent } from '../lib/scenario';
import { historyRole, historyText, insertHistory } from '../lib/stack-seed';
import { latencySummary } from '../lib/stats';
import { firstTokenMs } from '../lib/turn-tracker';
import { curveRepetitions, WORKLOADS } from '../lib/workloads';
import { withTimedStack } from '../lib/single-lane';

const { storedMessages, tokens, turnsPerRepetition, messageChars, boundedHistory } = WORKLOADS.historyCurve;

/**
 * How the first token's cost grows with the conversation's history: POST → first text-delta
 * of a turn on a conversation that already stores N messages, against the direct SDK sending
 * the same N messages (and the new one) to the same model, request by request in turn.
 */
export const historyTimeToFirstToken: Benchmark = {
  name: 'history-ttft',
  title: 'Curve: time to first token by stored messages in the conversation',
  kind: 'case',
  timeoutMs: (options) => 60_000 + storedMessages.length * curveRepetitions(options) * turnsPerRepetition * 2_000,
  async run(context, report) {
    const repetitions = curveRepetitions(context.options);
    report.note(
      `all-in-one, default settings; per point ${repetitions} repetition(s) of ${turnsPerRepetition} turns of ${tokens} tokens, each on a conversation ` +
        `of its own that stores exactly N messages when it is timed: N − 2 messages of ${messageChars} characters (user and assistant in turn) ` +
        'inserted straight into its schema with one INSERT per point, then one untimed turn (which adds its user and assistant message and ' +
        "takes a conversation's first-turn cost out of the figure). Each timed turn is followed by a direct SDK request sending the same N messages " +
        'and the new one; overhead = Switchyard percentile − direct SDK percentile of the same repetition. With few turns per repetition p99 is ' +
        'their maximum. Then each conversation takes one more timed turn with `maxHistoryMessages: ' +
        boundedHistory +
        '`: the bounded series.',
    );
    for (const count of storedMessages) {
      const label = `${count.toLocaleString('en-US')} stored messages`;
      report.define(`curve.history.m${count}.p50`, { label: `${label}: POST → first text-delta, p50`, unit: 'ms', baselineKey: `curve.history.m${count}.sdk.p50` });
      report.define(`curve.history.m${count}.p99`, { label: `${label}: POST → first text-delta, p99`, unit: 'ms', baselineKey: `curve.history.m${count}.sdk.p99` });
      report.define(`curve.history.m${count}.sdk.p50`, { label: `${label}: direct SDK with the same history, time to first token, p50`, unit: 'ms' });
      report.define(`curve.history.m${count}.sdk.p99`, { label: `${label}: direct SDK with the same history, time to first token, p99`, unit: 'ms' });
      report.define(`curve.history.m${count}.bounded.p50`, {
        label: `${label}: POST → first text-delta with maxHistoryMessages ${boundedHistory}, p50`,
        unit: 'ms',
        baselineKey: `curve.history.m${count}.p50`,
      });
      report.define(`curve.history.m${count}.overhead.p50`, { label: `${label}: p50 overhead (Switchyard − direct SDK)`, unit: 'ms' });
      report.define(`curve.history.m${count}.overhead.p99`, { label: `${label}: p99 overhead (Switchyard − direct SDK)`, unit: 'ms' });
    }
    const points = (key: string) => storedMessages.map((count) => ({ x: count, key: `curve.history.m${count}.${key}` }));
    report.curve({
      id: 'history-ttft',
      title: 'Time to first token by stored messages',
      x: { label: 'messages stored in the conversation', log: true },
      y: { label: 'time to first token', unit: 'ms', log: true },
      series: [
        { name: 'Switchyard p50 (POST → first text-delta)', points: points('p50') },
        { name: 'direct SDK p50 (same history sent)', points: points('sdk.p50') },
        { name: `Switchyard p50, maxHistoryMessages ${boundedHistory}`, points: points('bounded.p50') },
      ],
    });
    report.curve({
      id: 'history-ttft-overhead',
      title: 'Time-to-first-token overhead by stored messages',
      x: { label: 'messages stored in the conversation', log: true },
      y: { label: 'Switchyard − direct SDK', unit: 'ms' },
      series: [
        { name: 'p50 overhead', points: points('overhead.p50') },
        { name: 'p99 overhead', points: points('overhead.p99') },
      ],
    });

    await withTimedStack(context, { name: 'history-ttft', topology: 'all-in-one' }, async ({ stack, api, client, tracker }) => {
      const directClient = createDirectClient(context.scriptedModelUrl);
      const content = scriptedContent(fillerTokens(tokens));
      const turn = async (conversationId: string, options?: Record<string, unknown>) => firstTokenMs(await tracker.runTurn(api, conversationId, content, undefined, options));
      for (let index = 0; index < 3; index++) await streamDirect(directClient, fillerTokens(tokens));
      for (const count of storedMessages) {
        const conversationIds: string[] = [];
        for (let index = 0; index < repetitions * turnsPerRepetition; index++) conversationIds.push(await api.createConversation());
        await insertHistory(
          stack.schema,
          conversationIds,
          Array.from({ length: count - 2 }, (_unused, index) => historyText(index, messageChars)),
        );
        for (const conversationId of conversationIds) {
          await client.subscribe(conversationId);
          await turn(conversationId);
        }
        const history: OpenAI.ChatCompletionMessageParam[] = Array.from({ length: count }, (_unused, index) => ({
          role: historyRole(index),
          content: historyText(index, messageChars),
        }));
        history.push({ role: 'user', content });

        const meter = await CpuMeter.start(stack.meteredProcesses());
        for (let repetition = 0; repetition < repetitions; repetition++) {
          const switchyard: number[] = [];
          const direct: number[] = [];
          const bounded: number[] = [];
          const mine = conversationIds.slice(repetition * turnsPerRepetition, (repetition + 1) * turnsPerRepetition);
          for (const conversationId of mine) {
            switchyard.push(await turn(conversationId));
            const directTiming = await streamDirect(directClient, fillerTokens(tokens), history);
            direct.push(directTiming.firstTokenAt! - directTiming.startedAt);
          }
          for (const conversationId of mine) {
            bounded.push(await turn(conversationId, { maxHistoryMessages: boundedHistory }));
          }
          report.sample(`curve.history.m${count}.bounded.p50`, latencySummary(bounded).p50);
          const own = latencySummary(switchyard);
          const sdk = latencySummary(direct);
          report.sample(`curve.history.m${count}.p50`, own.p50);
          report.sample(`curve.history.m${count}.p99`, own.p99);
          report.sample(`curve.history.m${count}.sdk.p50`, sdk.p50);
          report.sample(`curve.history.m${count}.sdk.p99`, sdk.p99);
          report.sample(`curve.history.m${count}.overhead.p50`, own.p50 - sdk.p50);
          report.sample(`curve.history.m${count}.overhead.p99`, own.p99 - sdk.p99);
        }
        report.note(`${count.toLocaleString('en-US')} stored messages: ${await meter.stop('CPU while measuring (Switchyard turns and direct requests in turn)')}`);
        for (const conversationId of conversationIds) client.unsubscribe(conversationId);
      }
      if (client.errors.length > 0) report.note(`websocket error frames: ${client.errors.slice(0, 3).join('; ')}`);
    });
  },
};
