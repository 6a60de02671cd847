import { ApiClient } from '../lib/api-client';
import type { Benchmark, ReportBuilder } from '../lib/benchmark';
import { now, withTimeout } from '../lib/clock';
import { CpuMeter } from '../lib/cpu-meter';
import { createDirectClient, streamDirect } from '../lib/direct-stream';
import { FanOutCounter } from '../lib/fan-out-counter';
import { fillerTokens, scriptedContent, type Scenario } from '../lib/scenario';
import { startSwitchyard } from '../lib/switchyard-stack';
import { connectMany, type TimedWsClient } from '../lib/timed-ws-client';
import { WORKLOADS } from '../lib/workloads';

const { clients, tokens, pacedTokenDelayMs } = WORKLOADS.websocketFanOut;

/**
 * (6) One conversation streamed to many subscribers of one gateway, against a raw `ws`
 * broadcast of one-token frames. Like for like means the same unit on both sides: the target is
 * frames delivered per second (first → last text frame at any client) on both. Tokens per
 * second would compare Switchyard's merged frames (several tokens each) with one-token frames.
 * The answer is paced at `pacedTokenDelayMs` per token, as a model streams; at full speed
 * Switchyard merges the whole answer into two or three events, reported beside it.
 */
export const websocketFanOut: Benchmark = {
  name: 'ws-fan-out',
  title: `(6) Websocket fan-out, ${clients} subscribers`,
  kind: 'case',
  baselines: ['ws-broadcast'],
  timeoutMs: 240_000,
  async run(context, report) {
    report.define('fanout.framesPerSecond', {
      label: `paced answer (${pacedTokenDelayMs} ms/token): text-delta frames delivered/s in total (first → last text-delta at any client), like for like with the raw broadcast's frames/s`,
      unit: 'frames/s',
      baselineKey: 'ws.broadcast.framesPerSecond',
      target: { goal: '(6)', on: 'ratio', op: '>=', value: 0.5 },
    });
    report.define('fanout.tokensPerSecond', {
      label:
        'paced answer: tokens delivered/s in total (clients × tokens ÷ POST → last text-delta at the last client); NOT like for like: ' +
        "Switchyard's frames carry several tokens, the raw broadcast's one (the figure that was the target before)",
      unit: 'tokens/s',
      baselineKey: 'ws.broadcast.tokensPerSecond',
    });
    report.define('fanout.framesPerClient', { label: 'paced answer: text-delta frames per client', unit: 'frames' });
    report.define('fanout.tokensPerFrame', { label: 'paced answer: tokens per text-delta frame (the raw broadcast: 1)', unit: 'tokens' });
    report.define('fanout.endToEndMs', { label: 'paced answer: POST turn → last text-delta at the last client', unit: 'ms', baselineKey: 'ws.broadcast.endToEndMs' });
    report.define('fanout.lagMs', {
      label: 'paced answer: delivery lag at the last client (POST → last text-delta at the last client − direct SDK request → last token, same answer)',
      unit: 'ms',
    });
    report.define('fanout.burst.tokensPerSecond', {
      label: 'full-speed answer: tokens delivered/s in total (POST → last text-delta at the last client); not like for like either (merged frames)',
      unit: 'tokens/s',
      baselineKey: 'ws.broadcast.tokensPerSecond',
    });
    report.define('fanout.burst.framesPerClient', { label: 'full-speed answer: text-delta frames per client (merged deltas)', unit: 'frames' });
    report.note(
      `all-in-one, default settings; ${clients} websocket clients (in the bench process) subscribed to one conversation; per repetition ` +
        `one turn of ${tokens} tokens paced at ${pacedTokenDelayMs} ms per token (the target), then one of ${tokens} tokens at full speed. ` +
        'The target compares frames/s with frames/s: the raw broadcast sends one token per frame as fast as its clients drain them, ' +
        "Switchyard's frames follow the model's pace and merge what arrives while a write is in flight.",
    );
    const stack = await startSwitchyard(context, { name: 'ws-fan-out', topology: 'all-in-one' });
    const api = new ApiClient(stack.url, stack.apiKey);
    const sockets = await connectMany(stack.url, stack.apiKey, clients);
    try {
      const conversationId = await api.createConversation();
      for (let start = 0; start < sockets.length; start += 100) {
        await Promise.all(sockets.slice(start, start + 100).map((socket) => socket.subscribe(conversationId)));
      }
      const directClient = createDirectClient(context.scriptedModelUrl);
      const expectedChars = (await streamDirect(directClient, fillerTokens(tokens))).textChars;
      const paced = { ...fillerTokens(tokens), tokenDelayMs: pacedTokenDelayMs };
      const burst = fillerTokens(tokens);
      const turn = (scenario: Scenario) => fanOutTurn(api, sockets, conversationId, scenario);
      // Untimed: JIT and buffers on both sides.
      await turn(burst);

      report.note(
        'Even paced, Switchyard merges a few tokens per event while the event log has a write in flight (see "tokens per frame"), so its ' +
          "tokens/s is not comparable with the one-token-per-frame broadcast's; the delivery lag says how far behind the model the " +
          `${clients}th client is.`,
      );
      const meter = await CpuMeter.start(stack.meteredProcesses());
      for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
        const pacedTurn = await turn(paced);
        check(report, `repetition ${repetition + 1}, paced`, pacedTurn.result, expectedChars);
        report.sample('fanout.tokensPerSecond', (clients * tokens) / ((pacedTurn.result.lastDeltaAt - pacedTurn.startedAt) / 1000));
        report.sample('fanout.framesPerSecond', pacedTurn.result.deltaFrames / (pacedTurn.result.spanMs / 1000));
        report.sample('fanout.framesPerClient', pacedTurn.result.deltaFrames / clients);
        report.sample('fanout.tokensPerFrame', (clients * tokens) / pacedTurn.result.deltaFrames);
        report.sample('fanout.endToEndMs', pacedTurn.result.lastDeltaAt - pacedTurn.startedAt);
        const direct = await streamDirect(directClient, paced);
        report.sample('fanout.lagMs', pacedTurn.result.lastDeltaAt - pacedTurn.startedAt - (direct.lastTokenAt! - direct.startedAt));

        const burstTurn = await turn(burst);
        check(report, `repetition ${repetition + 1}, full speed`, burstTurn.result, expectedChars);
        report.sample('fanout.burst.tokensPerSecond', (clients * tokens) / ((burstTurn.result.lastDeltaAt - burstTurn.startedAt) / 1000));
        report.sample('fanout.burst.framesPerClient', burstTurn.result.deltaFrames / clients);
      }
      report.note(await meter.stop());
      const closed = sockets.filter((socket) => socket.closed);
      if (closed.length > 0) report.note(`${closed.length} clients were closed by the server (first: ${JSON.stringify(closed[0]!.closed)})`);
    } finally {
      await Promise.all(sockets.map((socket) => socket.close()));
      api.close();
      await stack.stop();
    }
  },
};

async function fanOutTurn(api: ApiClient, sockets: TimedWsClient[], conversationId: string, scenario: Scenario) {
  const counter = new FanOutCounter(sockets);
  const startedAt = now();
  await api.postTurn(conversationId, scriptedContent(scenario));
  await withTimeout(counter.allFinished, 60_000, 'the turn to reach every client');
  return { startedAt, result: counter.result() };
}

function check(report: ReportBuilder, label: string, result: ReturnType<FanOutCounter['result']>, expectedChars: number): void {
  if (result.disconnectedClients === 0 && result.incompleteClients === 0 && result.maxTextChars === expectedChars) return;
  report.note(
    `${label}: ${result.disconnectedClients} clients disconnected, ${result.incompleteClients} got less text; ` +
      `best-served client ${result.maxTextChars} characters of ${expectedChars}`,
  );
}
