import fs from 'node:fs';
import path from 'node:path';
import type { Benchmark } from '../lib/benchmark';
import { connectRedis } from '../lib/backing-services';
import { startChild, type RunningChild } from '../lib/child-process';
import { now } from '../lib/clock';
import { ConversationLane } from '../lib/conversation-lane';
import { fillerTokens, scriptedContent } from '../lib/scenario';
import { latencySummary } from '../lib/stats';
import { withSingleLane } from '../lib/single-lane';
import { firstTokenMs } from '../lib/turn-tracker';

const TOKENS = 20;
const SEQUENTIAL_TURNS = 100;
const LANES = 8;
const TURNS_PER_LANE = 15;
const FAILOVERS = 40;
const WARMUP = 20;

/** A scripted model of this case's own (its faults are set on it, not on the run's shared one). */
function startScriptedProvider(context: Parameters<Benchmark['run']>[0], name: string): Promise<RunningChild> {
  return startChild({ name, entry: 'workers/scripted-model.ts', env: { PORT: '0', HOST: '127.0.0.1' }, logDir: context.logDir, ready: { stdout: /listening on (http\S+)/ } });
}

/**
 * Routing's cost and fallback's speed, on one all-in-one whose models file names two scripted
 * providers: model `single` (the first alone) and `duo` (the first, then the second). Both
 * healthy, turns alternate between the two models in the same run: time to first token, one turn
 * at a time, and turns/s of 8 lanes at once. Then the first refuses every request with a 503 and
 * its cooldown is forgotten before each turn, so that every turn meets the failure afresh: the
 * time from the step's `provider-fallback` (announced as soon as the first target's answer came)
 * to its first token from the second, and POST → first token of such a turn.
 */
export const modelFallback: Benchmark = {
  name: 'model-fallback',
  title: 'Routing and fallback: a two-target model against one provider, and the time to fall back',
  kind: 'case',
  timeoutMs: 300_000,
  async run(context, report) {
    report.define('fallback.ttft.single.p50', { label: 'model of one target: POST → first text-delta, p50', unit: 'ms' });
    report.define('fallback.ttft.single.p99', { label: 'model of one target: POST → first text-delta, p99', unit: 'ms' });
    report.define('fallback.ttft.duo.p50', { label: 'model of two targets, both healthy: POST → first text-delta, p50', unit: 'ms', baselineKey: 'fallback.ttft.single.p50' });
    report.define('fallback.ttft.duo.p99', { label: 'model of two targets, both healthy: POST → first text-delta, p99', unit: 'ms', baselineKey: 'fallback.ttft.single.p99' });
    report.define('fallback.ttft.overhead.p50', { label: 'routing overhead, p50 (two targets − one)', unit: 'ms' });
    report.define('fallback.turns.single', { label: `model of one target: turns/s, ${LANES} lanes`, unit: 'turns/s' });
    report.define('fallback.turns.duo', { label: `model of two targets: turns/s, ${LANES} lanes`, unit: 'turns/s', baselineKey: 'fallback.turns.single' });
    report.define('fallback.failover.p50', { label: "the first target's 503 → first token from the second (provider-fallback → first text-delta), p50", unit: 'ms' });
    report.define('fallback.failover.p99', { label: "the first target's 503 → first token from the second, p99", unit: 'ms' });
    report.define('fallback.failover.post.p50', { label: 'first target refusing: POST → first text-delta, p50', unit: 'ms' });
    report.define('fallback.failover.post.p99', { label: 'first target refusing: POST → first text-delta, p99', unit: 'ms' });

    const [first, second] = await Promise.all([startScriptedProvider(context, 'fallback-first'), startScriptedProvider(context, 'fallback-second')]);
    const firstUrl = first.match![1]!;
    const modelsFile = path.join(context.tempDir, 'fallback-models.json');
    fs.writeFileSync(
      modelsFile,
      JSON.stringify({
        providers: { first: { baseURL: firstUrl }, second: { baseURL: second.match![1]! } },
        models: {
          single: { targets: [{ provider: 'first', model: 'scripted' }] },
          duo: {
            targets: [
              { provider: 'first', model: 'scripted' },
              { provider: 'second', model: 'scripted' },
            ],
          },
        },
        defaultModel: 'single',
      }),
    );
    const redis = connectRedis();
    const setFault = (fault: unknown) => fetch(`${firstUrl}/scripted/fault`, { method: fault ? 'PUT' : 'DELETE', ...(fault ? { body: JSON.stringify(fault) } : {}) });
    report.note(
      `all-in-one with MODELS_FILE: two scripted models in processes of their own; ${TOKENS}-token answers; per repetition ${SEQUENTIAL_TURNS} sequential turns alternating the two models, ` +
        `then ${LANES} lanes × ${TURNS_PER_LANE} turns of each model (one model at a time, the order alternating), then ${FAILOVERS} turns on duo with the first answering 503 ` +
        '(its cooldown deleted before each, so that each meets the failure: without that only the first would, the others going to the second at once).',
    );
    try {
      await withSingleLane(
        context,
        { name: 'model-fallback', topology: 'all-in-one', turnsPerConversation: 10, env: { MODELS_FILE: modelsFile } },
        async ({ stack, api, client, tracker, lane }) => {
          const content = scriptedContent(fillerTokens(TOKENS));
          const turn = async (model: string, onLane = lane) => tracker.runTurn(api, await onLane.next(), content, 30_000, { model });
          for (let index = 0; index < WARMUP; index++) await turn(index % 2 ? 'duo' : 'single');
          const lanes = Array.from({ length: LANES }, () => new ConversationLane(client, api, 10));
          const throughput = async (model: string) => {
            const startedAt = now();
            await Promise.all(
              lanes.map(async (each) => {
                for (let index = 0; index < TURNS_PER_LANE; index++) await turn(model, each);
              }),
            );
            return (LANES * TURNS_PER_LANE) / ((now() - startedAt) / 1000);
          };
          for (let repetition = 0; repetition < context.options.repetitions; repetition++) {
            const single: number[] = [];
            const duo: number[] = [];
            for (let index = 0; index < SEQUENTIAL_TURNS; index++) {
              const model = (index + repetition) % 2 === 0 ? 'single' : 'duo';
              (model === 'single' ? single : duo).push(firstTokenMs(await turn(model)));
            }
            const singleSummary = latencySummary(single);
            const duoSummary = latencySummary(duo);
            report.sample('fallback.ttft.single.p50', singleSummary.p50);
            report.sample('fallback.ttft.single.p99', singleSummary.p99);
            report.sample('fallback.ttft.duo.p50', duoSummary.p50);
            report.sample('fallback.ttft.duo.p99', duoSummary.p99);
            report.sample('fallback.ttft.overhead.p50', duoSummary.p50 - singleSummary.p50);
            const order = repetition % 2 === 0 ? ['single', 'duo'] : ['duo', 'single'];
            for (const model of order) report.sample(`fallback.turns.${model}`, await throughput(model));

            const failover: number[] = [];
            const post: number[] = [];
            await setFault({ refuse: { status: 503 } });
            for (let index = 0; index < FAILOVERS; index++) {
              await redis.del(`${stack.redisPrefix}:model-targets`);
              const timing = await turn('duo');
              const fellBackAt = timing.marks['provider-fallback'];
              if (fellBackAt === undefined) throw new Error('a turn on duo with the first refusing did not fall back');
              failover.push(timing.firstDeltaAt! - fellBackAt);
              post.push(firstTokenMs(timing));
            }
            await setFault(null);
            await redis.del(`${stack.redisPrefix}:model-targets`);
            const failoverSummary = latencySummary(failover);
            const postSummary = latencySummary(post);
            report.sample('fallback.failover.p50', failoverSummary.p50);
            report.sample('fallback.failover.p99', failoverSummary.p99);
            report.sample('fallback.failover.post.p50', postSummary.p50);
            report.sample('fallback.failover.post.p99', postSummary.p99);
          }
          for (const each of lanes) each.release();
        },
      );
    } finally {
      redis.disconnect();
      await Promise.all([first.stop(), second.stop()]);
    }
  },
};
