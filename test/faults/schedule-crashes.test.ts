import { faultProcesses } from '../support/fault-processes';
import { apiClient } from '../support/http';
import { poll } from '../support/poll';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server';
import { markedScripted } from '../support/scripted';
import { startTestStack, type TestStack } from '../support/stack';

const EVERY_MS = 10_000;

interface Run {
  runId: string;
  scheduledFor: string;
  status: 'started' | 'skipped' | 'refused';
  turnId?: string;
  conversationId?: string;
  reason?: string;
}

/**
 * docs/RELIABILITY.md case 48: schedules ticking every 10 s on three worker processes; one worker
 * SIGKILLed while it admits a due tick (held there by a lock on the conversation), another
 * SIGKILLed while ticks come due, Redis restarted meanwhile. Each tick makes exactly one run, none
 * is lost while a worker lives, and every run's turn finishes.
 */
describe('schedules through worker crashes and a Redis restart', () => {
  let redis: PrivateRedis;
  let stack: TestStack;
  const processes = faultProcesses(() => stack);

  beforeAll(async () => {
    redis = await startPrivateRedis();
    stack = await startTestStack({ workers: 0, env: { REDIS_URL: redis.url, LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '500', RECONCILE_INTERVAL_MS: '1000' } });
  }, 30_000);
  afterAll(async () => {
    await processes.stopAll();
    await stack?.close();
    await redis?.close();
  });

  it('makes one run per tick, loses none while a worker lives, and finishes every run’s turn', async () => {
    const { apiKey } = await stack.createUser('schedule-crashes');
    const api = apiClient(stack.url, apiKey);
    const db = stack.resources.db;
    const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
    const t0 = Math.ceil((Date.now() + 6000) / 1000) * 1000;
    const create = async (offsetMs: number, extra: Record<string, unknown>) => {
      const body = { content: markedScripted({ text: `tick ${offsetMs}` }), every: '10s', startAt: new Date(t0 + offsetMs).toISOString(), ...extra };
      const created = await api.post('/v1/schedules', body);
      expect(created.status).toBe(201);
      return { id: created.body.id as string, startAt: t0 + offsetMs };
    };
    // One into a conversation (its ticks can be held at admission), two making a conversation a run.
    const schedules = [await create(0, { conversationId }), await create(3000, {}), await create(6000, {})];
    const runsOf = async (id: string) => ((await api.get(`/v1/schedules/${id}/runs?limit=100`)).body.data as Run[]).reverse();

    // The first worker claims the first tick and is held in its admission: the conversation is locked.
    let release!: () => void;
    const released = new Promise<void>((resolve) => (release = resolve));
    let lockerPid = 0;
    const locked = db.transaction(async (tx) => {
      lockerPid = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await tx.query('SELECT id FROM conversations WHERE id = $1 FOR UPDATE', [conversationId]);
      await released;
    });
    await poll('no lock taken', () => lockerPid !== 0);
    const first = await processes.spawn('worker');
    await poll(
      'the first worker never waited on the conversation',
      async () => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [lockerPid])).rows[0]!.n > 0,
      20_000,
    );
    const [second] = await Promise.all([processes.spawn('worker'), processes.spawn('worker')]);
    await first.kill('SIGKILL');
    release();
    await locked;

    // Taken over once the dead worker's claim lapses: the tick runs, a few seconds late.
    await poll('the held tick never ran', async () => (await runsOf(schedules[0]!.id)).some((run) => run.scheduledFor === new Date(t0).toISOString()), 15_000, 200);

    // The second worker dies with ticks coming due, and Redis restarts; a replacement starts.
    await poll('the second schedule never ran', async () => (await runsOf(schedules[1]!.id)).length > 0, 15_000, 100);
    await second!.kill('SIGKILL');
    await redis.restart();
    await processes.spawn('worker');

    // Every schedule's ticks up to here have their run.
    const until = t0 + 4 * EVERY_MS;
    const expected = (startAt: number) => Array.from({ length: Math.floor((until - startAt) / EVERY_MS) + 1 }, (_, k) => new Date(startAt + k * EVERY_MS).toISOString());
    for (const schedule of schedules) {
      const ticks = expected(schedule.startAt);
      await poll(
        `schedule ${schedule.id} never reached ${ticks.at(-1)}`,
        async () => (await runsOf(schedule.id)).some((run) => run.scheduledFor === ticks.at(-1)),
        until - Date.now() + 20_000,
        250,
      );
    }
    await processes.stopAll();

    const turnIds: string[] = [];
    for (const schedule of schedules) {
      const runs = await runsOf(schedule.id);
      const ticks = expected(schedule.startAt);
      // One run per tick, in order, none lost.
      expect(runs.slice(0, ticks.length).map((run) => run.scheduledFor)).toEqual(ticks);
      expect(new Set(runs.map((run) => run.scheduledFor)).size).toBe(runs.length);
      for (const run of runs) {
        // Into its conversation, a tick may find the last run's turn still active (its queue was down): recorded so.
        if (run.status === 'skipped') expect(run.reason).toMatch(/a turn is active on the conversation/);
        else expect(run).toMatchObject({ status: 'started', turnId: expect.any(String) });
      }
      turnIds.push(...runs.filter((run) => run.turnId).map((run) => run.turnId!));
    }
    expect(new Set(turnIds).size).toBe(turnIds.length);
    // Exactly one turn per run: in the conversation (as many as its started runs), one in each new one.
    const started = (id: string, runs: Run[]) => runs.filter((run) => run.status === 'started' && run.conversationId === id).length;
    const turnsIn = async (id: string) => (await db.query<{ n: number }>('SELECT count(*)::int AS n FROM turns WHERE conversation_id = $1', [id])).rows[0]!.n;
    expect(await turnsIn(conversationId)).toBe(started(conversationId, await runsOf(schedules[0]!.id)));
    for (const schedule of schedules.slice(1)) {
      for (const run of await runsOf(schedule.id)) expect(await turnsIn(run.conversationId!)).toBe(1);
    }

    // The runs' turns finish, on a worker started after everything else.
    await processes.spawn('worker');
    await poll(
      'some runs’ turns never finished',
      async () => (await db.query<{ n: number }>("SELECT count(*)::int AS n FROM turns WHERE id = ANY($1) AND status <> 'completed'", [turnIds])).rows[0]!.n === 0,
      30_000,
      200,
    );
  }, 120_000);
});
