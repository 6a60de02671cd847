import { planStep, type CompactionLimits } from '../../src/turns/compaction-plan';
import type { StoredMessage } from '../../src/store/messages-repository';
import { estimatePromptTokens } from '../../src/usage/usage-estimate';
import type { Benchmark } from '../lib/benchmark';
import { now } from '../lib/clock';
import { CpuMeter } from '../lib/cpu-meter';
import { fillerTokens, scriptedContent } from '../lib/scenario';
import { historyRole, historyText, insertHistory } from '../lib/stack-seed';
import { latencySummary, median } from '../lib/stats';
import { firstTokenMs } from '../lib/turn-tracker';
import { curveRepetitions, WORKLOADS } from '../lib/workloads';
import { withTimedStack } from '../lib/single-lane';

const { storedMessages, tokens, turnsPerRepetition, messageChars } = WORKLOADS.historyCurve;
/** Small enough that every point past the first compacts (100 stored messages count about 3,500 tokens). */
const POLICY: CompactionLimits = { triggerTokens: 2000, keepRecentTokens: 500 };
/** Each trigger check timed this long (and at least 5 times): its median per call is the figure. */
const CHECK_MS = 200;

/**
 * What a compaction policy does to `history-ttft`'s curve: POST → first text-delta on
 * conversations that store N messages, without a policy and with one, timed in turn (a noisy
 * machine slows both alike); then the trigger check alone, in process, at each N.
 */
export const compactedHistoryTimeToFirstToken: Benchmark = {
  name: 'compacted-history-ttft',
  title: 'Curve: time to first token by stored messages, with and without a compaction policy',
  kind: 'case',
  timeoutMs: (options) => 60_000 + storedMessages.length * curveRepetitions(options) * turnsPerRepetition * 3 * 2_000,
  async run(context, report) {
    const repetitions = curveRepetitions(context.options);
    report.note(
      `all-in-one, default settings; per point ${repetitions} repetition(s) of ${turnsPerRepetition} pairs of conversations storing N − 2 messages ` +
        `of ${messageChars} characters (user and assistant in turn, inserted straight into the schema, as history-ttft), the second of each pair ` +
        `with the policy {triggerTokens: ${POLICY.triggerTokens}, keepRecentTokens: ${POLICY.keepRecentTokens}}. One turn on each (the "first turn": ` +
        'on the policy side it compacts past the trigger, its POST → first text-delta including the summary request), then the timed turn of ' +
        `${tokens} tokens on each of a pair in turn, the pair's order alternating.`,
    );
    report.note(
      'Trigger check: the decision a step of the policy side makes before its request (compaction-plan.ts planStep, counting with the o200k ' +
        `tokenizer as the worker does), timed in this process on the messages stored, median per call over ${CHECK_MS} ms of calls. "As read" is ` +
        'the path a step reads now: after the summary (all of it at N = 10, under the trigger); "whole path" is the same decision on every ' +
        'stored message, as a step read it before it read from the summary on (the summarised ones dropped in memory); "crossing" is the step ' +
        'that passes the trigger, counting all N and finding the cut.',
    );
    for (const count of storedMessages) {
      const label = `${count.toLocaleString('en-US')} stored messages`;
      report.define(`curve.compacted.m${count}.none.p50`, { label: `${label}, no policy: POST → first text-delta, p50`, unit: 'ms' });
      report.define(`curve.compacted.m${count}.none.p99`, { label: `${label}, no policy: POST → first text-delta, p99`, unit: 'ms' });
      report.define(`curve.compacted.m${count}.policy.p50`, {
        label: `${label}, with the policy: POST → first text-delta, p50`,
        unit: 'ms',
        baselineKey: `curve.compacted.m${count}.none.p50`,
      });
      report.define(`curve.compacted.m${count}.policy.p99`, {
        label: `${label}, with the policy: POST → first text-delta, p99`,
        unit: 'ms',
        baselineKey: `curve.compacted.m${count}.none.p99`,
      });
      report.define(`curve.compacted.m${count}.first.p50`, { label: `${label}, with the policy: the first turn (compacts past the trigger), p50`, unit: 'ms' });
      report.define(`curve.compacted.m${count}.check.read`, { label: `${label}: trigger check on the path as read, per step`, unit: 'ms' });
      report.define(`curve.compacted.m${count}.check.whole`, { label: `${label}: trigger check on the whole path, per step`, unit: 'ms' });
      report.define(`curve.compacted.m${count}.check.crossing`, { label: `${label}: trigger check of the step that crosses the trigger`, unit: 'ms' });
    }
    const points = (key: string) => storedMessages.map((count) => ({ x: count, key: `curve.compacted.m${count}.${key}` }));
    report.curve({
      id: 'compacted-history-ttft',
      title: 'Time to first token by stored messages, with and without a compaction policy',
      x: { label: 'messages stored in the conversation', log: true },
      y: { label: 'time to first token', unit: 'ms', log: true },
      series: [
        { name: 'p50, no policy', points: points('none.p50') },
        { name: 'p50, with the policy', points: points('policy.p50') },
        { name: 'p50 of the first turn with the policy (compacts)', points: points('first.p50') },
      ],
    });
    report.curve({
      id: 'compaction-trigger-check',
      title: 'The trigger check per step by stored messages',
      x: { label: 'messages stored in the conversation', log: true },
      y: { label: 'time per check', unit: 'ms', log: true },
      series: [
        { name: 'on the path as read (from the summary on)', points: points('check.read') },
        { name: 'on the whole path', points: points('check.whole') },
        { name: 'the step that crosses the trigger', points: points('check.crossing') },
      ],
    });

    await withTimedStack(context, { name: 'compacted-history-ttft', topology: 'all-in-one' }, async ({ stack, api, client, tracker }) => {
      const content = scriptedContent(fillerTokens(tokens));
      const turn = async (conversationId: string) => firstTokenMs(await tracker.runTurn(api, conversationId, content, 120_000));
      for (const count of storedMessages) {
        const plain: string[] = [];
        const compacting: string[] = [];
        for (let index = 0; index < repetitions * turnsPerRepetition; index++) {
          plain.push(await api.createConversation());
          compacting.push(await api.createConversation('bench', { compaction: POLICY }));
        }
        const texts = Array.from({ length: count - 2 }, (_unused, index) => historyText(index, messageChars));
        await insertHistory(stack.schema, [...plain, ...compacting], texts);
        const first: number[] = [];
        for (let index = 0; index < plain.length; index++) {
          await client.subscribe(plain[index]!);
          await client.subscribe(compacting[index]!);
          await turn(plain[index]!);
          first.push(await turn(compacting[index]!));
        }

        const meter = await CpuMeter.start(stack.meteredProcesses());
        for (let repetition = 0; repetition < repetitions; repetition++) {
          const none: number[] = [];
          const policy: number[] = [];
          for (let index = repetition * turnsPerRepetition; index < (repetition + 1) * turnsPerRepetition; index++) {
            if (index % 2 === 0) {
              none.push(await turn(plain[index]!));
              policy.push(await turn(compacting[index]!));
            } else {
              policy.push(await turn(compacting[index]!));
              none.push(await turn(plain[index]!));
            }
          }
          const own = latencySummary(none);
          const compacted = latencySummary(policy);
          report.sample(`curve.compacted.m${count}.none.p50`, own.p50);
          report.sample(`curve.compacted.m${count}.none.p99`, own.p99);
          report.sample(`curve.compacted.m${count}.policy.p50`, compacted.p50);
          report.sample(`curve.compacted.m${count}.policy.p99`, compacted.p99);
          report.sample(`curve.compacted.m${count}.first.p50`, latencySummary(first.slice(repetition * turnsPerRepetition, (repetition + 1) * turnsPerRepetition)).p50);
        }
        report.note(`${count.toLocaleString('en-US')} stored messages: ${await meter.stop('CPU while measuring (both sides in turn)')}`);
        for (const conversationId of [...plain, ...compacting]) client.unsubscribe(conversationId);

        for (let repetition = 0; repetition < repetitions; repetition++) {
          const checks = triggerChecks(texts, content);
          report.sample(`curve.compacted.m${count}.check.read`, checks.read);
          report.sample(`curve.compacted.m${count}.check.whole`, checks.whole);
          report.sample(`curve.compacted.m${count}.check.crossing`, checks.crossing);
        }
      }
      if (client.errors.length > 0) report.note(`websocket error frames: ${client.errors.slice(0, 3).join('; ')}`);
    });
  },
};

/**
 * The trigger check's time per call on a conversation storing `texts` and then the first
 * turn's user message: on the path a step reads (from the summary the crossing step would make),
 * on the whole path with that summary, and the crossing step itself.
 */
function triggerChecks(texts: string[], content: string): { read: number; whole: number; crossing: number } {
  const path: StoredMessage[] = [...texts, content].map((text, index) => ({
    id: `msg_${index + 1}`,
    role: index === texts.length ? 'user' : historyRole(index),
    content: text,
    turnId: null,
  }));
  const countTokens = (messages: Parameters<typeof estimatePromptTokens>[0]['messages']) => estimatePromptTokens({ messages });
  const decide = (messages: StoredMessage[], summary: { summary: string; upToRowId: string } | null) =>
    planStep({ system: null, summary, path: messages, limits: POLICY, countTokens });
  const cut = decide(path, null);
  const summary = cut.kind === 'compact' ? { summary: 'Summary of the conversation so far, a few lines long.', upToRowId: cut.upTo.id.slice('msg_'.length) } : null;
  const read = summary ? path.filter((message) => Number(message.id.slice('msg_'.length)) > Number(summary.upToRowId)) : path;
  return { read: timePerCall(() => decide(read, summary)), whole: timePerCall(() => decide(path, summary)), crossing: timePerCall(() => decide(path, null)) };
}

function timePerCall(check: () => unknown): number {
  const times: number[] = [];
  const until = now() + CHECK_MS;
  while (times.length < 5 || now() < until) {
    const startedAt = now();
    check();
    times.push(now() - startedAt);
  }
  return median(times);
}
