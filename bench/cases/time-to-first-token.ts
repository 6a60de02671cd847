import type { Benchmark } from '../lib/benchmark';
import { startAiSdkPeer } from '../lib/ai-sdk-peer-process';
import { CpuMeter } from '../lib/cpu-meter';
import { fillerTokens, scriptedContent } from '../lib/scenario';
import { latencySummary } from '../lib/stats';
import { withSingleLane } from '../lib/single-lane';
import { phaseBreakdown } from '../lib/turn-phases';
import { firstTokenMs, type TurnTiming } from '../lib/turn-tracker';
import { UiChatClient } from '../lib/ui-chat-client';
import { WORKLOADS } from '../lib/workloads';

const { tokens, turnsPerRepetition, turnsPerConversation, warmup } = WORKLOADS.ttft;

/**
 * (1) POST a turn → its first text-delta at a subscribed websocket client, one turn at a
 * time, minus the direct SDK's time to first token for the same answer. The AI SDK peer's
 * turns are interleaved with Switchyard's (one of each in turn, the order alternating), so
 * that both meet the same moments of a noisy machine: its first token moved by as much as the
 * gap being measured when it ran as a baseline of its own, before or after.
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
      // The ratio column: Switchyard's overhead ÷ the AI SDK peer's, both over the same direct SDK.
      baselineKey: 'ttft.peer.overhead.p50',
      target: { goal: '(1)', on: 'value', op: '<=', value: 3 },
    });
    report.define('ttft.overhead.p99', {
      label: 'p99 overhead (Switchyard TTFT p99 − direct SDK TTFT p99)',
      unit: 'ms',
      baselineKey: 'ttft.peer.overhead.p99',
      target: { goal: '(1)', on: 'value', op: '<=', value: 15 },
    });
    report.define('ttft.p50', { label: 'POST turn → first text-delta at the ws client, p50', unit: 'ms', baselineKey: 'sdk.ttft.p50' });
    report.define('ttft.p99', { label: 'POST turn → first text-delta at the ws client, p99', unit: 'ms', baselineKey: 'sdk.ttft.p99' });
    report.define('ttft.vsPeer.p50', {
      label: "POST turn → first text-delta, p50, against the AI SDK + resumable-stream peer's POST → first text-delta p50",
      unit: 'ms',
      baselineKey: 'ttft.peer.p50',
      target: { goal: '(1) peer', on: 'ratio', op: '<=', value: 1 },
    });
    report.define('ttft.vsPeer.p99', {
      label: "POST turn → first text-delta, p99, against the peer's p99",
      unit: 'ms',
      baselineKey: 'ttft.peer.p99',
      target: { goal: '(1) peer', on: 'ratio', op: '<=', value: 1 },
    });
    report.define('ttft.peer.p50', { label: 'the AI SDK + resumable-stream peer, interleaved: POST → first text-delta chunk, p50', unit: 'ms' });
    report.define('ttft.peer.p99', { label: 'the peer, interleaved: POST → first text-delta chunk, p99', unit: 'ms' });
    report.define('ttft.peer.overhead.p50', { label: 'the peer, interleaved: p50 overhead (its TTFT p50 − direct SDK TTFT p50)', unit: 'ms' });
    report.define('ttft.peer.overhead.p99', { label: 'the peer, interleaved: p99 overhead (its TTFT p99 − direct SDK TTFT p99)', unit: 'ms' });
    report.define('ttft.turn.p50', { label: 'POST turn → turn-finish at the ws client, p50', unit: 'ms' });
    report.note(
      `all-in-one, default settings; ${turnsPerRepetition} sequential turns of ${tokens} tokens per repetition, followed on one websocket, ` +
        `a new conversation every ${turnsPerConversation} turns (made and subscribed before the timed POST); ` +
        `overhead = each repetition's percentile − the median of the baseline's. The peer, the AI SDK's "Chatbot Resume Streams" pattern in ` +
        'its own process (`ai` streamText with `@ai-sdk/openai-compatible` on the scripted model → toUIMessageStream with consumeSseStream → ' +
        "`resumable-stream` on Redis, its chat store a Map in memory: nothing durable), takes a turn after each of Switchyard's, or before it, " +
        "in alternation, its chats changing as often, timed POST → first `text-delta` chunk read off its SSE response; the overheads' ratio column is Switchyard's overhead ÷ the peer's, and the \"(1) peer\" targets ask Switchyard's " +
        "first token to arrive no later than the peer's, both from these interleaved turns.",
    );
    const peer = await startAiSdkPeer(context, 'ttft-peer');
    const peerClient = new UiChatClient(peer.url);
    try {
      await withSingleLane(context, { name: 'ttft', topology: 'all-in-one', turnsPerConversation }, async ({ stack, api, client, tracker, lane }) => {
        const content = scriptedContent(fillerTokens(tokens));
        const oneTurn = async () => tracker.runTurn(api, await lane.next(), content);
        let peerTurns = 0;
        const onePeerTurn = async () => {
          const timing = await peerClient.post(`chat-${Math.floor(peerTurns++ / turnsPerConversation)}`, content);
          return timing.firstTextAt! - timing.startedAt;
        };
        for (let index = 0; index < warmup; index++) {
          await oneTurn();
          await onePeerTurn();
        }

        const meter = await CpuMeter.start(stack.meteredProcesses());
        const timings: TurnTiming[] = [];
        const baselineP50 = context.baseline('sdk.ttft.p50')?.median ?? Number.NaN;
        const baselineP99 = context.baseline('sdk.ttft.p99')?.median ?? Number.NaN;
        for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
          const firstToken: number[] = [];
          const whole: number[] = [];
          const peerFirstToken: number[] = [];
          for (let index = 0; index < turnsPerRepetition; index++) {
            if (index % 2 === 1) peerFirstToken.push(await onePeerTurn());
            const timing = await oneTurn();
            if (index % 2 === 0) peerFirstToken.push(await onePeerTurn());
            timings.push(timing);
            firstToken.push(firstTokenMs(timing));
            whole.push(timing.endedAt! - timing.postedAt);
          }
          const summary = latencySummary(firstToken);
          report.sample('ttft.p50', summary.p50);
          report.sample('ttft.p99', summary.p99);
          report.sample('ttft.vsPeer.p50', summary.p50);
          report.sample('ttft.vsPeer.p99', summary.p99);
          report.sample('ttft.overhead.p50', summary.p50 - baselineP50);
          report.sample('ttft.overhead.p99', summary.p99 - baselineP99);
          report.sample('ttft.turn.p50', latencySummary(whole).p50);
          const peerSummary = latencySummary(peerFirstToken);
          report.sample('ttft.peer.p50', peerSummary.p50);
          report.sample('ttft.peer.p99', peerSummary.p99);
          report.sample('ttft.peer.overhead.p50', peerSummary.p50 - baselineP50);
          report.sample('ttft.peer.overhead.p99', peerSummary.p99 - baselineP99);
        }
        report.note(await meter.stop('CPU while measuring', { count: timings.length, unit: 'turn' }));
        report.note(phaseBreakdown(timings));
        if (client.errors.length > 0) report.note(`websocket error frames: ${client.errors.slice(0, 3).join('; ')}`);
      });
    } finally {
      peerClient.close();
      await peer.stop();
    }
  },
};
