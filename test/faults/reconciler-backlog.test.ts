import { observeJobs } from '../../src/queue/job-states';
import { enqueueTurn, turnJobId } from '../../src/queue/turn-queue';
import { reconcileTurns, startReconciler, type ReconcileCounts, type ReconcilerDeps } from '../../src/turns/turn-reconciler';
import type { RedisClient } from '../../src/redis/redis-connection';
import { startTestStack, type TestStack } from '../support/stack';

/**
 * docs/RELIABILITY.md case 7: Redis lost its data with a backlog of unfinished turns. Two workers'
 * reconcilers share the work through their lock and a cursor: every turn without a job is
 * enqueued exactly once, in passes of bounded size, ceil(N / RECONCILE_MAX_TURNS_PER_PASS) of them.
 */
describe('reconciler with a backlog of 2,000 turns after a Redis loss', () => {
  const TURNS = 2000;
  const STILL_QUEUED = 200;
  const PER_PASS = 500;
  /** Turns per page of a pass (turn-reconciler.ts). */
  const PAGE = 200;
  let stack: TestStack;
  let deps: ReconcilerDeps;

  beforeAll(async () => {
    stack = await startTestStack({ workers: 0 });
    deps = { ...stack.resources, redisPrefix: stack.config.REDIS_PREFIX };
    const { id: userId } = await stack.createUser('backlog');
    // What PostgreSQL holds after Redis came back empty: 2,000 conversations, each with an unfinished turn.
    await stack.resources.db.query(`INSERT INTO conversations (id, user_id) SELECT 'c-' || g, $1 FROM generate_series(1, $2::int) g`, [userId, TURNS]);
    await stack.resources.db.query(
      `INSERT INTO turns (id, conversation_id, user_id, status, input)
       SELECT 't-' || g, 'c-' || g, $1, 'queued', '{"content": "hello"}' FROM generate_series(1, $2::int) g`,
      [userId, TURNS],
    );
    // Some jobs survived (or were enqueued since): those turns must not be enqueued again.
    for (let i = 1; i <= STILL_QUEUED; i++) await enqueueTurn(stack.resources.turnQueue, { id: `t-${i}` }, 1, 0);
  }, 60_000);
  afterAll(() => stack.close());

  it('enqueues each turn without a job once, the two reconcilers taking turns in passes of at most 500', async () => {
    const passes: ReconcileCounts[] = [];
    let enqueued = 0;
    let done!: () => void;
    const allEnqueued = new Promise<void>((resolve) => (done = resolve));
    const onPass = (counts: ReconcileCounts) => {
      passes.push(counts);
      enqueued += counts.enqueued;
      if (enqueued >= TURNS - STILL_QUEUED) done();
    };
    const reconcilers = [1, 2].map(() => startReconciler(deps, { intervalMs: 100, maxTurnsPerPass: PER_PASS, onPass }));
    try {
      await allEnqueued;
    } finally {
      await Promise.all(reconcilers.map((reconciler) => reconciler.stop()));
    }

    expect(enqueued).toBe(TURNS - STILL_QUEUED);
    expect(passes.every((pass) => pass.checked <= PER_PASS)).toBe(true);
    // The stated bound: ceil(2000 / 500) passes that found work.
    expect(passes.filter((pass) => pass.checked > 0).length).toBeLessThanOrEqual(Math.ceil(TURNS / PER_PASS));

    const ids = Array.from({ length: TURNS }, (_, i) => turnJobId(`t-${i + 1}`));
    const states = await observeJobs(
      stack.resources.redis,
      ids.map((id) => ({ queue: stack.resources.turnQueue, id })),
    );
    expect(states.filter((state) => state.state !== 'live')).toEqual([]);
    const counts = await stack.resources.turnQueue.getJobCounts('waiting', 'prioritized', 'delayed', 'active');
    expect(Object.values(counts).reduce((sum, count) => sum + count, 0)).toBe(TURNS);

    // Nothing is left to repair: a full pass checks them all and enqueues none, reading the
    // jobs of each page of turns in one Redis round trip, none turn by turn.
    const counted = countingRedis(deps.redis);
    expect(await reconcileTurns({ ...deps, redis: counted.redis }, { maxTurns: 10 * TURNS })).toEqual({ checked: TURNS, enqueued: 0, retried: 0, failed: 0, next: null });
    expect(counted.roundTrips).toEqual({ pipelines: Math.ceil(TURNS / PAGE), commandsInPipelines: TURNS * 3 * 2, single: 0 });
  }, 60_000);
});

/**
 * The same connection, counting round trips: each pipeline sent (with its commands), and each
 * command sent on its own.
 */
function countingRedis(redis: RedisClient): { redis: RedisClient; roundTrips: { pipelines: number; commandsInPipelines: number; single: number } } {
  const roundTrips = { pipelines: 0, commandsInPipelines: 0, single: 0 };
  const proxy = new Proxy(redis, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== 'function') return value;
      if (property === 'pipeline' || property === 'multi') {
        return (...args: unknown[]) => {
          const pipeline = value.apply(target, args);
          const exec = pipeline.exec.bind(pipeline);
          pipeline.exec = () => {
            roundTrips.pipelines++;
            roundTrips.commandsInPipelines += pipeline.length;
            return exec();
          };
          return pipeline;
        };
      }
      return (...args: unknown[]) => {
        roundTrips.single++;
        return value.apply(target, args);
      };
    },
  });
  return { redis: proxy, roundTrips };
}
