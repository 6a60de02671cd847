import { ApiClient } from '../lib/api-client';
import type { Redis } from 'ioredis';
import { connectRedis } from '../lib/backing-services';
import type { Benchmark, ReportBuilder } from '../lib/benchmark';
import { now, sleep } from '../lib/clock';
import { ConversationLane } from '../lib/conversation-lane';
import { CpuMeter } from '../lib/cpu-meter';
import { formatNumber } from '../lib/markdown-report';
import { parallelCalculatorCalls, scriptedContent } from '../lib/scenario';
import { keyShapes, SoakSampler, type SoakSample } from '../lib/soak-sampler';
import { mean, median } from '../lib/stats';
import { startSwitchyard } from '../lib/switchyard-stack';
import { TimedWsClient } from '../lib/timed-ws-client';
import { TurnTracker } from '../lib/turn-tracker';
import { WORKLOADS } from '../lib/workloads';

const { callsPerTurn, concurrency, turnsPerConversation, retentionSeconds, sampleEveryMs } = WORKLOADS.soak;
/** Below this rate the soak stops early (and says so) rather than overrun the suite's budget. */
const SLOWEST_TURNS_PER_SECOND = 15;
const MIN_LOAD_SECONDS = 60;
/**
 * The load goes on at least this long, turns asked or not: RSS grows to its plateau for the
 * first 60–70 s at ~100 turns/s (the allocator's and V8's pools filling), so the middle third,
 * which "flat" compares against, must start past that.
 */
const SUSTAINED_SECONDS = 180;
/** "Flat": the last third of the load is at most this much above its middle third. */
const FLAT_GROWTH_PERCENT = 10;

const loadSecondsFor = (turns: number) => Math.max(MIN_LOAD_SECONDS, SUSTAINED_SECONDS, turns / SLOWEST_TURNS_PER_SECOND);

/**
 * (7) Many turns with tool calls over many conversations, watching the memory of every process
 * and of Redis before, during and after (past the event log's retention): nothing may grow
 * without bound. Runs once (a repetition would not fit the budget); each figure has n = 1.
 */
export const soak: Benchmark = {
  name: 'soak',
  title: '(7) Soak: memory under sustained load',
  kind: 'case',
  timeoutMs: (options) => (loadSecondsFor(options.soakTurns) + retentionSeconds + 90) * 1000,
  async run(context, report) {
    const turns = context.options.soakTurns;
    const stack = await startSwitchyard(context, {
      name: 'soak',
      topology: 'all-in-one',
      env: { EVENT_LOG_TTL_SECONDS: String(retentionSeconds) },
    });
    const processes = stack.meteredProcesses();
    const redis = connectRedis();
    const api = new ApiClient(stack.url, stack.apiKey);
    const clients: TimedWsClient[] = [];
    let finished = 0;
    let failed = 0;
    let firstFailure: string | undefined;
    const sampler = new SoakSampler(redis, `${stack.redisPrefix}:`, processes, () => finished, [{ name: 'all-in-one', url: `${stack.url}/metrics` }]);
    try {
      const tracker = new TurnTracker();
      for (let lane = 0; lane < concurrency; lane++) {
        const client = await TimedWsClient.connect(stack.url, stack.apiKey);
        tracker.listen(client);
        clients.push(client);
      }
      const content = scriptedContent(parallelCalculatorCalls(callsPerTurn));
      const before = await sampler.sample('before');

      const meter = await CpuMeter.start(processes);
      // In a full run the soak comes last: it gives up turns rather than overrun the budget.
      const budgetSeconds = context.remainingMs() / 1000 - retentionSeconds - 30;
      const loadSeconds = Math.min(loadSecondsFor(turns), budgetSeconds);
      if (loadSeconds < 20) throw new Error(`not enough of the run's time budget left for a soak (${Math.round(budgetSeconds)} s)`);
      const deadline = now() + loadSeconds * 1000;
      const startedAt = now();
      let started = 0;
      sampler.startLoadSampling(sampleEveryMs);
      // Each lane moves to a new conversation every few turns: conversations come and go, as
      // in production, and their subscriptions and replay logs must go with them.
      await Promise.all(
        clients.map(async (client) => {
          const lane = new ConversationLane(client, api, turnsPerConversation);
          while ((started < turns || now() - startedAt < SUSTAINED_SECONDS * 1000) && now() < deadline) {
            started++;
            try {
              const timing = await tracker.runTurn(api, await lane.next(), content, 30_000);
              if (timing.endType === 'turn-finish' && !timing.toolsFailed) finished++;
              else {
                failed++;
                firstFailure ??= `a turn ended with ${timing.endType} (${timing.toolsFailed ?? 0} tools failed)`;
              }
            } catch (error) {
              failed++;
              firstFailure ??= (error as Error).message;
              if (failed > 100) throw new Error(`more than 100 soak turns failed; first: ${firstFailure}`);
            }
          }
          lane.release();
        }),
      );
      const loadMs = now() - startedAt;
      sampler.stopLoadSampling();
      const end = await sampler.sample('load');
      const cpu = await meter.stop('CPU during the load', { count: finished, unit: 'turn' });

      // Past the replay log's retention, with nothing running, what is left is what stays.
      await sleep((retentionSeconds + 5) * 1000);
      const after = await sampler.sample('after');
      const remaining = await keyShapes(redis, `${stack.redisPrefix}:`);

      report.note(
        `all-in-one with EVENT_LOG_TTL_SECONDS=${retentionSeconds}; ${concurrency} lanes in a closed loop, each turn a step with ${callsPerTurn} ` +
          `parallel \`calculator\` calls and a follow-up; a new conversation every ${turnsPerConversation} turns per lane; ${turns} turns asked and at least ${SUSTAINED_SECONDS} s of load, memory sampled every ${sampleEveryMs / 1000} s, ` +
          `"after" ${retentionSeconds + 5} s after the last turn.`,
      );
      if (started < turns) report.note(`stopped after ${started} turns: the load is bounded to ${Math.round(loadSeconds)} s.`);
      if (failed > 0) report.note(`${failed} turns failed (first: ${firstFailure}).`);
      report.note(cpu);
      report.note(
        `"flat" means: over the load's samples, the last third is at most ${FLAT_GROWTH_PERCENT}% above the middle third (the first is warm-up), by median — ` +
          "of RSS, and of the V8 heap right after each major collection (the service's `switchyard_heap_after_major_gc_bytes`), which moves only with what is retained; " +
          'a leak moves the whole third, where one dip (pages handed back to the OS) or one sample between collections moves a lowest sample, reported beside it — and after the retention the prefix ' +
          'holds at most 10 keys more than before. Redis bytes during the load follow the turn rate (live replay logs are turns/s × retention) ' +
          "and BullMQ's event streams filling up to their cap, so they are shown, not judged.",
      );
      report.note(`BullMQ event streams after the retention (entries; BullMQ caps them at about 10,000): ${await eventStreamLengths(redis, `${stack.redisPrefix}:`)}.`);
      report.note(`Redis keys left after the retention, by shape: ${[...remaining].map(([shape, count]) => `\`${shape}\` ×${count}`).join(', ') || 'none'}.`);
      report.note(
        `timeline (s, turns, ${processes.map((process) => `${process.name} RSS MiB`).join(', ')}, all-in-one V8 heap MiB, all-in-one V8 heap after the last major GC MiB, Redis used_memory MiB, ` +
          `prefix keys, prefix MiB): ${timeline(sampler.samples)}`,
      );

      reportFigures(report, { before, end, after, samples: sampler.samples, finished, loadMs, processes });
    } finally {
      sampler.stopLoadSampling();
      await Promise.all(clients.map((client) => client.close()));
      api.close();
      redis.disconnect();
      await stack.stop();
    }
  },
};

function reportFigures(
  report: ReportBuilder,
  input: { before: SoakSample; end: SoakSample; after: SoakSample; samples: SoakSample[]; finished: number; loadMs: number; processes: { name: string }[] },
): void {
  const { before, end, after } = input;
  const load = input.samples.filter((sample) => sample.phase === 'load');
  /**
   * % change from the middle third of the load to its last third (the first third is warm-up),
   * by mean, median or lowest sample. Thirds rather than quarters: a floor needs a major
   * collection inside its window, and V8 runs one only every ten seconds or more here.
   */
  const growth = (pick: (sample: SoakSample) => number, by: 'mean' | 'median' | 'floor' = 'mean') => {
    if (load.length < 9) return Number.NaN;
    const third = Math.floor(load.length / 3);
    const summarize = (samples: SoakSample[]) => {
      const values = samples.map(pick);
      return by === 'mean' ? mean(values) : by === 'median' ? median(values) : Math.min(...values);
    };
    const middle = summarize(load.slice(third, 2 * third));
    const last = summarize(load.slice(load.length - third));
    return ((last - middle) / middle) * 100;
  };
  const flat = { goal: '(7)', on: 'value', op: '<=', value: FLAT_GROWTH_PERCENT } as const;

  report.define('soak.turns', { label: 'turns finished', unit: 'turns' });
  report.sample('soak.turns', input.finished);
  report.define('soak.turnsPerSecond', { label: 'turns/s during the load', unit: 'turns/s' });
  report.sample('soak.turnsPerSecond', input.finished / (input.loadMs / 1000));
  report.define('soak.heapAfterGc.all-in-one.growth', {
    label: 'all-in-one: V8 heap right after a major collection (what survives GC), median of the middle → of the last third of the load',
    unit: '%',
    target: flat,
  });
  report.sample(
    'soak.heapAfterGc.all-in-one.growth',
    growth((sample) => sample.heapAfterGc['all-in-one'] ?? Number.NaN, 'median'),
  );
  report.define('soak.heap.all-in-one.growth', {
    label: 'all-in-one: V8 heap in use, lowest sample of the middle → of the last third of the load',
    unit: '%',
  });
  report.sample(
    'soak.heap.all-in-one.growth',
    growth((sample) => sample.heap['all-in-one'] ?? Number.NaN, 'floor'),
  );
  for (const process of input.processes) {
    const name = process.name;
    const service = name !== 'scripted model';
    report.define(`soak.rss.${name}.growth`, {
      label: `${name}: RSS, median of the middle → of the last third of the load`,
      unit: '%',
      ...(service ? { target: flat } : {}),
    });
    report.sample(
      `soak.rss.${name}.growth`,
      growth((sample) => sample.rss[name]!, 'median'),
    );
    report.define(`soak.rss.${name}.floorGrowth`, { label: `${name}: RSS, lowest sample of the middle → of the last third of the load`, unit: '%' });
    report.sample(
      `soak.rss.${name}.floorGrowth`,
      growth((sample) => sample.rss[name]!, 'floor'),
    );
    const peak = Math.max(...input.samples.map((sample) => sample.rss[name]!));
    for (const [label, value] of [
      ['before the load', before.rss[name]!],
      ['peak', peak],
      ['after the retention', after.rss[name]!],
    ] as const) {
      report.define(`soak.rss.${name}.${label}`, { label: `${name}: RSS ${label}`, unit: 'MiB' });
      report.sample(`soak.rss.${name}.${label}`, value);
    }
  }
  report.define('soak.redis.prefixGrowth', { label: 'Redis: bytes under the prefix, mean of the middle → of the last third of the load (see notes)', unit: '%' });
  report.sample(
    'soak.redis.prefixGrowth',
    growth((sample) => sample.prefixMiB),
  );
  report.define('soak.redis.retainedKeys', {
    label: 'Redis: keys under the prefix after the retention − before the load',
    unit: 'keys',
    target: { goal: '(7)', on: 'value', op: '<=', value: 10 },
  });
  report.sample('soak.redis.retainedKeys', after.prefixKeys - before.prefixKeys);
  for (const [label, sample] of [
    ['before the load', before],
    ['at the end of the load', end],
    ['after the retention', after],
  ] as const) {
    report.define(`soak.redis.prefixMiB.${label}`, { label: `Redis: MiB under the prefix ${label}`, unit: 'MiB' });
    report.sample(`soak.redis.prefixMiB.${label}`, sample.prefixMiB);
  }
  report.define('soak.redis.usedMemoryDelta', { label: 'Redis INFO used_memory after − before (whole server)', unit: 'MiB' });
  report.sample('soak.redis.usedMemoryDelta', after.redisUsedMiB - before.redisUsedMiB);
}

/** Up to a dozen evenly spread samples, as `t/turns/rss…/used/keys/MiB` groups. */
function timeline(samples: SoakSample[]): string {
  const step = Math.max(1, Math.ceil(samples.length / 12));
  const picked = samples.filter((_sample, index) => index % step === 0 || index === samples.length - 1);
  return picked
    .map((sample) =>
      [
        `${sample.phase === 'load' ? '' : `${sample.phase} `}${sample.at.toFixed(0)}`,
        sample.turns,
        ...Object.values(sample.rss).map((rss) => formatNumber(rss)),
        ...Object.values(sample.heap).map((heap) => formatNumber(heap)),
        ...Object.values(sample.heapAfterGc).map((heap) => formatNumber(heap)),
        formatNumber(sample.redisUsedMiB),
        sample.prefixKeys,
        formatNumber(sample.prefixMiB),
      ].join('/'),
    )
    .join(' · ');
}

/** XLEN of each BullMQ `<queue>:events` stream under the prefix. */
async function eventStreamLengths(redis: Redis, prefix: string): Promise<string> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, page] = await redis.scan(cursor, 'MATCH', `${prefix}*:events`, 'COUNT', 1000);
    cursor = next;
    keys.push(...page);
  } while (cursor !== '0');
  const lengths = await Promise.all(keys.map(async (key) => `\`${key.slice(prefix.length)}\` ${await redis.xlen(key)}`));
  return lengths.join(', ') || 'none';
}
