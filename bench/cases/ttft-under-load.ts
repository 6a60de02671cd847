import type { Redis } from 'ioredis';
import { startAiSdkPeer } from '../lib/ai-sdk-peer-process';
import { ApiClient } from '../lib/api-client';
import { BackgroundLoad, type BackgroundAnswer } from '../lib/background-load';
import type { Benchmark, ReportBuilder } from '../lib/benchmark';
import { connectRedis, redisCpuSeconds } from '../lib/backing-services';
import { ConversationLane } from '../lib/conversation-lane';
import { now, sleep } from '../lib/clock';
import { createDirectClient, streamDirect } from '../lib/direct-stream';
import { formatNumber } from '../lib/markdown-report';
import { cpuSeconds, ownCpuSeconds, postgresCpuSeconds } from '../lib/process-usage';
import type { RunContext } from '../lib/run-context';
import { fillerTokens, scriptedContent } from '../lib/scenario';
import { percentile } from '../lib/stats';
import { startSwitchyard, type SwitchyardStack, type Topology } from '../lib/switchyard-stack';
import { connectMany, TimedWsClient } from '../lib/timed-ws-client';
import { phaseBreakdown } from '../lib/turn-phases';
import { firstTokenMs, TurnTracker, type TurnTiming } from '../lib/turn-tracker';
import { UiChatClient } from '../lib/ui-chat-client';
import { curveRepetitions, WORKLOADS } from '../lib/workloads';

const { inFlight, backgroundTokens, tokenDelayMs, foregroundTokens, foregroundRequests, rounds, turnsPerConversation, warmup, minWindowMs, maxRoundMs } = WORKLOADS.ttftUnderLoad;

/** A system under test: its background answers, its timed foreground request, the processes it runs. */
interface LoadedSystem {
  key: string;
  label: string;
  background: BackgroundAnswer;
  /** One foreground request: ms from the request to its first text token at the client. */
  foreground(): Promise<number>;
  processes: { name: string; pid: number }[];
  /** Where the foreground's time went since the last call, as its client saw it (Switchyard's events). */
  phases?(): string;
  stop(): Promise<void>;
}

/** What one system accumulated at one N over a repetition's rounds. */
interface Tally {
  firstToken: number[];
  chars: number;
  ms: number;
  cpu: Map<string, number>;
  failures: number;
  errors: string[];
}

const backgroundScenario = { tokens: backgroundTokens, tokenDelayMs };

/**
 * The first token while N answers stream: N background answers of `backgroundTokens` tokens,
 * paced by the scripted model, each restarted as it ends, while foreground requests time
 * request → first text token one at a time. The systems take turns in rounds (the order
 * rotating each round), each with its own background load running only during its turn, so
 * that all of them meet the same moments of a shared machine, as (1) interleaves its turns.
 */
export const ttftUnderLoad: Benchmark = {
  name: 'ttft-under-load',
  title: `First token under load: ${inFlight.join(' and ')} answers in flight`,
  kind: 'case',
  timeoutMs: (options) => 120_000 + curveRepetitions(options) * inFlight.length * 400_000,
  async run(context, report) {
    const repetitions = curveRepetitions(context.options);
    defineFigures(report);
    report.note(
      `N background answers of ${backgroundTokens} tokens (the scripted model pacing them at ${tokenDelayMs} ms a token; each restarted as it ends, ` +
        `the N started spread over one answer's length) while ${foregroundRequests} foreground requests of ${foregroundTokens} tokens, one at a time, ` +
        `time request → first text token at the client. Per repetition (${repetitions}) and N, ${rounds} rounds; in each round every system in turn ` +
        '(the order rotating) starts its background load, takes its share of the foreground requests, and stops its load (in-flight answers end). ' +
        'Direct SDK: `openai` streams from the bench process. The peer: the AI SDK + resumable-stream server of (1), its clients reading SSE. ' +
        'Switchyard: each background answer is a turn followed by its own websocket client (a new conversation every ' +
        `${turnsPerConversation} turns), the foreground turns by one more client; WORKER_CONCURRENCY=256 so that no turn waits in the queue. ` +
        `Background tokens/s = text delivered to the background clients while measuring ÷ that time (characters ÷ characters per token); a round measures for at least ${minWindowMs / 1000} s ` +
        `(the load stays on after the foreground requests if they took less) and takes foreground requests for at most ${maxRoundMs / 1000} s (so a system whose first token takes seconds gives fewer samples: see the counts in the notes).`,
    );
    const redis = connectRedis();
    const charsPerToken = (await streamDirect(createDirectClient(context.scriptedModelUrl), fillerTokens(backgroundTokens))).textChars / backgroundTokens;
    const systems: LoadedSystem[] = [];
    try {
      systems.push(directSystem(context));
      systems.push(await peerSystem(context));
      systems.push(await switchyardSystem(context, 'all-in-one'));
      systems.push(await switchyardSystem(context, 'api-and-workers'));
      for (const system of systems) {
        for (let index = 0; index < warmup; index++) await system.foreground();
        system.phases?.();
      }

      for (let repetition = 0; repetition < repetitions; repetition++) {
        for (const n of inFlight) {
          const tallies = new Map(systems.map((system) => [system.key, newTally()]));
          const perRound = Math.ceil(foregroundRequests / rounds);
          for (let round = 0; round < rounds; round++) {
            const order = systems.map((_unused, index) => systems[(index + round) % systems.length]!);
            for (const system of order) {
              context.log(`  N=${n} round ${round + 1}/${rounds}: ${system.label}`);
              await measureRound(redis, system, n, perRound, tallies.get(system.key)!);
            }
          }
          for (const system of systems) record(report, context, system, n, tallies.get(system.key)!, charsPerToken);
        }
      }
    } finally {
      for (const system of systems.reverse()) await system.stop().catch(() => undefined);
      redis.disconnect();
    }
  },
};

function newTally(): Tally {
  return { firstToken: [], chars: 0, ms: 0, cpu: new Map(), failures: 0, errors: [] };
}

/**
 * Starts the system's load, times `requests` foreground requests (fewer if they take past
 * `maxRoundMs`), keeps the load on for at least `minWindowMs` (the background's tokens/s and
 * the CPU are read over that window), and stops the load.
 */
async function measureRound(redis: Redis, system: LoadedSystem, n: number, requests: number, tally: Tally): Promise<void> {
  const load = await BackgroundLoad.start(n, system.background, backgroundTokens * tokenDelayMs);
  try {
    load.take();
    const startedAt = now();
    const before = await readCpu(redis, system.processes);
    for (let index = 0; index < requests && now() - startedAt < maxRoundMs; index++) tally.firstToken.push(await system.foreground());
    const left = minWindowMs - (now() - startedAt);
    if (left > 0) await sleep(left);
    const after = await readCpu(redis, system.processes);
    const delivered = load.take();
    tally.chars += delivered.chars;
    tally.ms += delivered.ms;
    for (const [name, seconds] of after) tally.cpu.set(name, (tally.cpu.get(name) ?? 0) + seconds - (before.get(name) ?? 0));
  } finally {
    await load.stop();
    tally.failures += load.failures;
    tally.errors.push(...load.errors.slice(0, 3 - tally.errors.length));
  }
}

async function readCpu(redis: Redis, processes: { name: string; pid: number }[]): Promise<Map<string, number>> {
  const cpu = new Map<string, number>();
  for (const process of processes) cpu.set(process.name, cpuSeconds(process.pid));
  cpu.set('bench client', ownCpuSeconds());
  cpu.set('redis-server', await redisCpuSeconds(redis));
  cpu.set('postgres', postgresCpuSeconds());
  return cpu;
}

const figureKey = (n: number, system: string, figure: string) => `load.n${n}.${system}.${figure}`;

function defineFigures(report: ReportBuilder): void {
  const systems = [
    ['direct', 'direct SDK'],
    ['peer', 'the AI SDK + resumable-stream peer'],
    ['aio', 'Switchyard all-in-one'],
    ['split', 'Switchyard, 1 API + 1 worker process'],
  ] as const;
  for (const n of inFlight) {
    for (const [system, label] of systems) {
      const switchyard = system === 'aio' || system === 'split';
      for (const p of ['p50', 'p95', 'p99'] as const) {
        const target =
          system === 'aio' && n === 100 && p !== 'p95'
            ? { goal: 'under load', on: 'value' as const, op: '<=' as const, value: p === 'p50' ? 25 : 80 }
            : system === 'aio' && n === 20 && p === 'p50'
              ? { goal: 'under load', on: 'value' as const, op: '<=' as const, value: 6 }
              : undefined;
        report.define(figureKey(n, system, p), {
          label: `N=${n}: ${label}, request → first text token, ${p}`,
          unit: 'ms',
          ...(switchyard || system === 'peer' ? { baselineKey: figureKey(n, 'direct', p) } : {}),
          ...(target ? { target } : {}),
        });
      }
      if (switchyard) {
        for (const p of ['p50', 'p99'] as const) {
          report.define(figureKey(n, system, `vsPeer.${p}`), {
            label: `N=${n}: ${label}, first token ${p} against the peer's`,
            unit: 'ms',
            baselineKey: figureKey(n, 'peer', p),
          });
        }
      }
      report.define(figureKey(n, system, 'tokensPerSecond'), {
        label: `N=${n}: ${label}, background tokens/s delivered`,
        unit: 'tokens/s',
        ...(system === 'direct' ? {} : { baselineKey: figureKey(n, 'direct', 'tokensPerSecond') }),
        ...(system === 'aio' && n === 100 ? { target: { goal: 'under load', on: 'ratio', op: '>=', value: 0.8 } as const } : {}),
      });
    }
  }
  for (const p of ['p50', 'p99'] as const) {
    report.curve({
      id: `ttft-under-load-${p}`,
      title: `Request → first text token (${p}) while N answers stream`,
      x: { label: 'background answers in flight (N)' },
      y: { label: `first token, ${p}`, unit: 'ms', log: true },
      series: systems.map(([system, label]) => ({ name: label, points: inFlight.map((n) => ({ x: n, key: figureKey(n, system, p) })) })),
    });
  }
}

function record(report: ReportBuilder, context: RunContext, system: LoadedSystem, n: number, tally: Tally, charsPerToken: number): void {
  for (const p of [50, 95, 99] as const) report.sample(figureKey(n, system.key, `p${p}`), percentile(tally.firstToken, p));
  if (system.key === 'aio' || system.key === 'split') {
    report.sample(figureKey(n, system.key, 'vsPeer.p50'), percentile(tally.firstToken, 50));
    report.sample(figureKey(n, system.key, 'vsPeer.p99'), percentile(tally.firstToken, 99));
  }
  const seconds = tally.ms / 1000;
  report.sample(figureKey(n, system.key, 'tokensPerSecond'), tally.chars / charsPerToken / seconds);
  // Backends that exited between two readings take their CPU time with them: never less than nothing.
  const cpu = [...tally.cpu].map(([name, used]) => `${name} ${Math.max(0, Math.round((used / seconds) * 100))}%`).join(', ');
  report.note(`N=${n}, ${system.label}: ${tally.firstToken.length} foreground requests; CPU as a share of one core over the ${formatNumber(seconds)} s measured: ${cpu}.`);
  const phases = system.phases?.();
  if (phases) report.note(`N=${n}, ${system.label}, foreground turns: ${phases}`);
  if (tally.failures > 0) {
    const line = `N=${n}, ${system.label}: ${tally.failures} background answers failed (${tally.errors.join('; ')})`;
    report.note(line);
    context.log(line);
  }
}

function directSystem(context: RunContext): LoadedSystem {
  const foregroundClient = createDirectClient(context.scriptedModelUrl);
  const backgroundClient = createDirectClient(context.scriptedModelUrl);
  return {
    key: 'direct',
    label: 'direct SDK',
    async background(_slot, onText) {
      await streamDirect(backgroundClient, backgroundScenario, undefined, onText);
    },
    async foreground() {
      const timing = await streamDirect(foregroundClient, fillerTokens(foregroundTokens));
      return timing.firstTokenAt! - timing.startedAt;
    },
    processes: [{ name: 'scripted model', pid: context.scriptedModelPid }],
    stop: async () => undefined,
  };
}

async function peerSystem(context: RunContext): Promise<LoadedSystem> {
  const peer = await startAiSdkPeer(context, 'load-peer');
  const foregroundClient = new UiChatClient(peer.url);
  const backgroundClient = new UiChatClient(peer.url);
  const answers = new Map<number, number>();
  let foregroundCount = 0;
  const backgroundContent = scriptedContent(backgroundScenario);
  const foregroundContent = scriptedContent(fillerTokens(foregroundTokens));
  return {
    key: 'peer',
    label: 'the peer',
    async background(slot, onText) {
      const count = answers.get(slot) ?? 0;
      answers.set(slot, count + 1);
      await backgroundClient.post(`bg-${slot}-${Math.floor(count / turnsPerConversation)}`, backgroundContent, 120_000, onText);
    },
    async foreground() {
      const timing = await foregroundClient.post(`fg-${Math.floor(foregroundCount++ / turnsPerConversation)}`, foregroundContent);
      return timing.firstTextAt! - timing.startedAt;
    },
    processes: [
      { name: 'peer', pid: peer.pid },
      { name: 'scripted model', pid: context.scriptedModelPid },
    ],
    async stop() {
      foregroundClient.close();
      backgroundClient.close();
      await peer.stop();
    },
  };
}

async function switchyardSystem(context: RunContext, topology: Topology): Promise<LoadedSystem> {
  const split = topology === 'api-and-workers';
  const stack: SwitchyardStack = await startSwitchyard(context, {
    name: split ? 'ttft-load-split' : 'ttft-load',
    topology,
    workers: 1,
    env: { WORKER_CONCURRENCY: '256' },
  });
  const api = new ApiClient(stack.url, stack.apiKey);
  const clients: TimedWsClient[] = [];
  try {
    const tracker = new TurnTracker();
    const foregroundClient = await TimedWsClient.connect(stack.url, stack.apiKey);
    clients.push(foregroundClient);
    tracker.listen(foregroundClient);
    const foregroundLane = new ConversationLane(foregroundClient, api, turnsPerConversation);
    const backgroundClients = await connectMany(stack.url, stack.apiKey, Math.max(...inFlight));
    clients.push(...backgroundClients);
    const onTextBySlot: ((chars: number) => void)[] = [];
    const backgroundLanes = backgroundClients.map((client, slot) => {
      client.onEvent = (event, receivedAt) => {
        if (event.type === 'text-delta') onTextBySlot[slot]?.(event.delta?.length ?? 0);
        tracker.handle(event, receivedAt);
      };
      return new ConversationLane(client, api, turnsPerConversation);
    });
    const backgroundContent = scriptedContent(backgroundScenario);
    const foregroundContent = scriptedContent(fillerTokens(foregroundTokens));
    let foregroundTimings: TurnTiming[] = [];
    return {
      key: split ? 'split' : 'aio',
      label: split ? 'Switchyard 1 API + 1 worker' : 'Switchyard all-in-one',
      async background(slot, onText) {
        onTextBySlot[slot] = onText;
        const timing = await tracker.runTurn(api, await backgroundLanes[slot]!.next(), backgroundContent, 120_000);
        if (timing.endType !== 'turn-finish') throw new Error(`a background turn ended with ${timing.endType}`);
      },
      async foreground() {
        const timing = await tracker.runTurn(api, await foregroundLane.next(), foregroundContent);
        const firstToken = firstTokenMs(timing, 'a foreground turn');
        foregroundTimings.push(timing);
        return firstToken;
      },
      phases() {
        const text = phaseBreakdown(foregroundTimings);
        foregroundTimings = [];
        return text;
      },
      processes: stack.services
        .map((service) => ({ name: service.process.name.replace(/^ttft_load(_split)?-/, ''), pid: service.process.pid }))
        .concat({ name: 'scripted model', pid: context.scriptedModelPid }),
      async stop() {
        await Promise.all(clients.map((client) => client.close()));
        api.close();
        await stack.stop();
      },
    };
  } catch (error) {
    await Promise.all(clients.map((client) => client.close()));
    api.close();
    await stack.stop();
    throw error;
  }
}
