import type { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import pino from 'pino';
import { createWebhookQueue, enqueueDeliveries, hasDeliveryJob } from '../../../src/queue/webhook-queue';
import type { Db } from '../../../src/store/db';
import { UsersRepository } from '../../../src/store/users-repository';
import { WebhooksRepository, type DeliveryToRun } from '../../../src/store/webhooks-repository';
import type { SweepPaging } from '../../../src/webhooks/lost-job-sweep';
import { startWebhookRelay } from '../../../src/webhooks/webhook-relay';
import { SecretBox } from '../../../src/webhooks/secret-box';
import { generateWebhookSecret } from '../../../src/webhooks/webhook-signature';
import { createTestDatabase } from '../../support/database';
import { uniqueSuffix } from '../../support/ids';
import { poll } from '../../support/poll';
import { dropRedisPrefix, TEST_REDIS_URL } from '../../support/services';

/** The relay's passes: often, so that its sweeps (every 30 intervals) come within the test. */
const INTERVAL_MS = 20;

/**
 * The relay's sweep for lost jobs (webhooks/lost-job-sweep.ts) over real PostgreSQL and Redis:
 * a backlog of overdue deliveries, most of them still with their job (deferred: moved back to
 * delayed while their endpoint had no free slot, their next_attempt_at left as it was), some
 * whose job Redis lost.
 */
describe("the webhook relay's sweep for lost jobs", () => {
  let db: Db;
  let drop: () => Promise<void>;
  let webhooks: WebhooksRepository;
  const redis = new Redis(TEST_REDIS_URL);
  let queue: Queue;
  const prefix = `t-sweep-${uniqueSuffix()}`;

  beforeAll(async () => {
    ({ db, drop } = await createTestDatabase('postgres'));
    webhooks = new WebhooksRepository(db);
    queue = createWebhookQueue(redis, prefix);
  });
  afterAll(async () => {
    await queue.close();
    await dropRedisPrefix(prefix);
    redis.disconnect();
    await drop();
  });

  /**
   * `count` pending deliveries of one endpoint whose attempts were due an hour ago, in order, each
   * a millisecond and a fraction apart (microseconds, as PostgreSQL keeps them); the first `withJobs`
   * keep their job, delayed far ahead, the rest have lost theirs.
   */
  async function overdueBacklog(count: number, withJobs: number): Promise<DeliveryToRun[]> {
    const user = await new UsersRepository(db).createUserWithKey(`sweep-${uniqueSuffix()}`);
    const secret = new SecretBox('lost-job-sweep-test-key-of-32-characters').seal(generateWebhookSecret());
    await webhooks.createEndpoint({ id: `wh_${user.id}`, userId: user.id, url: 'https://hooks.example.com/in', events: ['*'], description: null, secret }, 1);
    await db.query(`SELECT record_webhook_event($1, 'turn.completed', jsonb_build_object('turnId', 'turn_' || n)) FROM generate_series(1, $2::int) AS n`, [user.id, count]);
    const { rows } = await db.query<{ id: string; next_attempt_at: Date; redelivered_at: Date | null }>(
      `UPDATE webhook_deliveries AS d SET enqueued_at = clock_timestamp(),
         next_attempt_at = clock_timestamp() - interval '1 hour' + (numbered.n * interval '1001 microseconds')
       FROM (SELECT id, row_number() OVER (ORDER BY ordinal) AS n FROM webhook_deliveries WHERE endpoint_id = $1) AS numbered
       WHERE d.id = numbered.id RETURNING d.id, d.next_attempt_at, d.redelivered_at`,
      [`wh_${user.id}`],
    );
    const runs = rows.map((row) => ({ id: row.id, nextAttemptAt: row.next_attempt_at, redeliveredAt: row.redelivered_at })).sort((a, b) => +a.nextAttemptAt! - +b.nextAttemptAt!);
    await enqueueDeliveries(
      queue,
      runs.slice(0, withJobs).map((run) => ({ run, delayMs: 3_600_000 })),
    );
    return runs;
  }

  /** A relay on the test's queue; `readded`: the deliveries it logged as given their job back. */
  function startRelay(sweepPaging?: SweepPaging): { readded: string[]; stop(): Promise<void> } {
    const readded: string[] = [];
    const write = (line: string) => {
      const entry = JSON.parse(line);
      if (entry.msg === 'webhook delivery job re-added') readded.push(entry.deliveryId);
    };
    const relay = startWebhookRelay(
      { webhooks, webhookQueue: queue, logger: pino({ level: 'info' }, { write }), wakeups: () => ({ close: async () => undefined }) },
      { intervalMs: INTERVAL_MS, ...(sweepPaging ? { sweepPaging } : {}) },
    );
    return { readded, stop: () => relay.stop() };
  }

  /** Waits until every delivery of `runs` has a job. */
  async function untilAllHaveJobs(runs: DeliveryToRun[], readded: string[]): Promise<void> {
    const missing = async () => (await Promise.all(runs.map(async (run) => ((await hasDeliveryJob(queue, run)) ? [] : [run.id])))).flat();
    await poll(
      () => `deliveries still without a job after the sweeps (${readded.length} re-added)`,
      async () => (await missing()).length === 0,
      20_000,
    );
  }

  beforeEach(async () => {
    await db.query('DELETE FROM webhook_deliveries');
  });

  it('re-adds the lost jobs past the first 500 overdue deliveries, which all still have theirs', async () => {
    const runs = await overdueBacklog(600, 550);
    const relay = startRelay();
    try {
      await untilAllHaveJobs(runs, relay.readded);
    } finally {
      await relay.stop();
    }
    expect([...relay.readded].sort()).toEqual(
      runs
        .slice(550)
        .map((run) => run.id)
        .sort(),
    );
  });

  it('goes on from where the sweep before stopped, and starts over once it reached the end', async () => {
    // Pages of 7, two a sweep: the 45 deliveries take four sweeps.
    const runs = await overdueBacklog(45, 30);
    const lost = runs.slice(30);
    const relay = startRelay({ pageSize: 7, maxPages: 2 });
    try {
      await untilAllHaveJobs(runs, relay.readded);
      expect([...relay.readded].sort()).toEqual(lost.map((run) => run.id).sort());

      // The first delivery's job lost now: the sweeps reached the end, and look from the first again.
      await queue.remove(runs[0]!.id);
      expect(await hasDeliveryJob(queue, runs[0]!)).toBe(false);
      await untilAllHaveJobs(runs, relay.readded);
      expect(relay.readded.slice(lost.length)).toEqual([runs[0]!.id]);
    } finally {
      await relay.stop();
    }
  });
});
