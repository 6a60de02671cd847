import { QueueEvents } from 'bullmq';
import type { Client } from 'pg';
import { turnJobId } from '../../src/queue/turn-queue';
import { apiClient } from '../support/http';
import { checkInvariants } from '../support/invariants';
import { spawnService, type ServiceProcess } from '../support/processes';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server';
import { connectDirect, TEST_POSTGRES_URL, TEST_REDIS_URL } from '../support/services';
import { markedScripted } from '../support/scripted';
import { startTestStack, type TestStack } from '../support/stack';
import { startPostgresProxy, startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { TestWsClient } from '../support/ws-client';

const FAULT_ENV = { LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '500' };

/** docs/RELIABILITY.md case 8, and the reconciler that makes it safe. */
describe('Redis unreachable', () => {
  let redis: PrivateRedis;
  let stack: TestStack;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    stack = await startTestStack({ env: { ...FAULT_ENV, REDIS_URL: redis.url, RECONCILE_INTERVAL_MS: '500' } });
  });
  afterAll(async () => {
    await stack.close();
    await redis.close();
  });

  it('GET /v1/turns/:id keeps answering from PostgreSQL while Redis is down', async () => {
    const { apiKey } = await stack.createUser('turn-reader');
    const api = apiClient(stack.url, apiKey);
    const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
    const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content: markedScripted({ text: 'ok' }) });
    const client = await TestWsClient.connect(stack.url, { apiKey });
    client.send({ type: 'subscribe', conversationId });
    await client.waitForTurnEnd(posted.body.turnId);
    client.close();
    await redis.stop();
    try {
      expect(await api.get(`/v1/turns/${posted.body.turnId}`)).toMatchObject({ status: 200, body: { status: 'completed' } });
    } finally {
      await redis.start();
    }
  });

  it('answers 503 with Retry-After at once, keeps PostgreSQL reads working, and runs the recorded turn when Redis returns', async () => {
    const { apiKey } = await stack.createUser('outage');
    const api = apiClient(stack.url, apiKey);
    const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
    // A tool call, so that the turn needs the tool worker's connections back as well.
    const scenario = { steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }] }, { text: 'recorded while Redis was away' }] };
    const body = { content: markedScripted(scenario), idempotencyKey: 'during-outage' };

    await redis.stop();

    const refused = await api.post(`/v1/conversations/${conversationId}/turns`, body);
    expect(refused.status).toBe(503);
    expect(refused.body.error.code).toBe('unavailable');
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const turnId = refused.body.error.details.turnId as string;

    // The turn is recorded: repeating the request with its key follows it, without a second one.
    const repeated = await api.post(`/v1/conversations/${conversationId}/turns`, body);
    expect(repeated).toMatchObject({ status: 200, body: { turnId, status: 'queued' } });

    const ready = await api.get('/readyz');
    expect(ready).toMatchObject({ status: 503, body: { status: 'unavailable', checks: { redis: { ok: false, error: expect.any(String) }, database: { ok: true } } } });
    expect(ready.headers.get('retry-after')).not.toBeNull();

    const conversation = await api.get(`/v1/conversations/${conversationId}`);
    expect(conversation).toMatchObject({ status: 200, body: { id: conversationId, lastSeq: 0, messages: [] } });
    const list = await api.get('/v1/conversations');
    expect(list.status).toBe(200);
    expect(list.body.data.map((each: { id: string }) => each.id)).toEqual([conversationId]);

    await redis.start();

    // Nobody posts it again: the reconciler finds it in PostgreSQL.
    const client = await TestWsClient.connect(stack.url, { apiKey });
    client.send({ type: 'subscribe', conversationId });
    const events = await client.waitForTurnEnd(turnId);
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish', turnId });
    expect(events.filter((event) => event.type === 'turn-start')).toHaveLength(1);
    expect(events.find((event) => event.type === 'tool-result')).toMatchObject({ result: { result: 42 } });
    // The reconciler uses the fail-fast connection, so that one is back too.
    expect((await api.get('/readyz')).status).toBe(200);
    const stored = (await api.get(`/v1/conversations/${conversationId}`)).body;
    expect(stored.messages.at(-1).content).toBe('recorded while Redis was away');
    expect(await checkInvariants(stack.resources.db, { turnIds: [turnId], toolExecutions: [] })).toEqual({ [turnId]: 'completed' });
    client.close();
  }, 20_000);
});

/** A server that accepts connections and answers nothing: a hang, or packets dropped on the way. */
describe('Redis or PostgreSQL that hangs', () => {
  let redisProxy: TcpProxy;
  let postgresProxy: TcpProxy;
  let stack: TestStack;
  const REDIS_TIMEOUT_MS = 1000;
  const QUERY_TIMEOUT_MS = 1500;

  beforeAll(async () => {
    const redisTarget = new URL(TEST_REDIS_URL);
    redisProxy = await startTcpProxy({ host: redisTarget.hostname, port: Number(redisTarget.port || 6379) });
    postgresProxy = await startPostgresProxy(TEST_POSTGRES_URL);
    stack = await startTestStack({
      env: {
        ...FAULT_ENV,
        REDIS_URL: redisProxy.urlFor(TEST_REDIS_URL),
        DATABASE_URL: postgresProxy.urlFor(TEST_POSTGRES_URL),
        REDIS_COMMAND_TIMEOUT_MS: String(REDIS_TIMEOUT_MS),
        DATABASE_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
        RECONCILE_INTERVAL_MS: '500',
      },
    });
  });
  afterAll(async () => {
    redisProxy.restore();
    postgresProxy.restore();
    await stack.close();
    await Promise.all([redisProxy.close(), postgresProxy.close()]);
  });

  /** Runs a turn with a tool call to its end: proves the API, both BullMQ workers and the gateway serve. */
  async function runToolTurn(apiKey: string, conversationId: string, turnId?: string): Promise<string> {
    const api = apiClient(stack.url, apiKey);
    const client = await TestWsClient.subscribed(stack.url, { apiKey }, conversationId);
    const scenario = { steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '2+3' } }] }, { text: 'five' }] };
    const id = turnId ?? (await api.post(`/v1/conversations/${conversationId}/turns`, { content: markedScripted(scenario) })).body.turnId;
    const events = (await client.waitForTurnEnd(id)).filter((event) => event.turnId === id);
    client.close();
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish' });
    return id;
  }

  it('a hung Redis: the API answers 503 after its command timeout, not never, and the turn runs once Redis answers', async () => {
    const { apiKey } = await stack.createUser('hung-redis');
    const api = apiClient(stack.url, apiKey);
    const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
    const scenario = { steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '2+3' } }] }, { text: 'five' }] };

    redisProxy.freeze();
    // The rate limit and the enqueue each wait one command timeout.
    const refused = await api.post(`/v1/conversations/${conversationId}/turns`, { content: markedScripted(scenario) });
    expect(refused).toMatchObject({ status: 503, body: { error: { code: 'unavailable' } } });
    expect(refused.headers.get('retry-after')).not.toBeNull();
    const conversation = await api.get(`/v1/conversations/${conversationId}`);
    expect(conversation.status).toBe(200);
    expect((await api.get('/readyz')).body.checks).toMatchObject({ redis: { ok: false }, database: { ok: true } });

    redisProxy.restore();
    const turnId = await runToolTurn(apiKey, conversationId, refused.body.error.details.turnId);
    expect(await checkInvariants(stack.resources.db, { turnIds: [turnId], toolExecutions: [] })).toEqual({ [turnId]: 'completed' });
  }, 20_000);

  it('a hung PostgreSQL: requests answer 503 after the query timeout, not never, and work again once it answers', async () => {
    const { apiKey } = await stack.createUser('hung-postgres');
    const api = apiClient(stack.url, apiKey);
    const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
    // Pooled connections exist now: the requests below meet a server that stopped answering.
    expect((await api.get(`/v1/conversations/${conversationId}`)).status).toBe(200);

    postgresProxy.freeze();
    const read = await api.get(`/v1/conversations/${conversationId}`);
    expect(read).toMatchObject({ status: 503, body: { error: { code: 'unavailable' } } });
    const write = await api.post('/v1/conversations', {});
    expect(write.status).toBe(503);
    expect((await api.get('/readyz')).body.checks).toMatchObject({ redis: { ok: true }, database: { ok: false } });

    postgresProxy.restore();
    const turnId = await runToolTurn(apiKey, conversationId);
    expect(await checkInvariants(stack.resources.db, { turnIds: [turnId], toolExecutions: [] })).toEqual({ [turnId]: 'completed' });
  }, 20_000);
});

describe('the reconciler at start', () => {
  let stack: TestStack;

  beforeAll(async () => {
    // No worker yet, and an interval longer than the test: only the pass at start can act.
    stack = await startTestStack({ workers: 0, env: { ...FAULT_ENV, RECONCILE_INTERVAL_MS: '600000' } });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('runs a turn recorded in PostgreSQL whose job Redis no longer has', async () => {
    const { apiKey } = await stack.createUser('reconcile');
    const api = apiClient(stack.url, apiKey);
    const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
    const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content: markedScripted({ text: 'found again' }) });
    expect(posted.status).toBe(202);
    const turnId = posted.body.turnId as string;
    expect(await stack.resources.turnQueue.remove(turnJobId(turnId))).toBe(1);

    const client = await TestWsClient.subscribed(stack.url, { apiKey }, conversationId);
    await stack.addWorker();
    const events = await client.waitForTurnEnd(turnId);
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish', turnId });
    expect(stack.scripted.requests).toHaveLength(1);
    expect(await checkInvariants(stack.resources.db, { turnIds: [turnId], toolExecutions: [] })).toEqual({ [turnId]: 'completed' });
    client.close();
  });
});

/** docs/RELIABILITY.md case 9: PostgreSQL unreachable (a proxy cut) while a step streams and commits. */
describe('PostgreSQL down when a step commits', () => {
  let proxy: TcpProxy;
  let stack: TestStack;
  let direct: Client;
  let queueEvents: QueueEvents;
  const text = Array.from({ length: 60 }, (_, i) => `token${i}`).join(' ');

  beforeAll(async () => {
    proxy = await startPostgresProxy(TEST_POSTGRES_URL);
    stack = await startTestStack({ env: { ...FAULT_ENV, DATABASE_URL: proxy.urlFor(TEST_POSTGRES_URL) } });
    // Reads what PostgreSQL really holds while the stack cannot reach it.
    direct = await connectDirect(stack.config.DATABASE_SCHEMA);
    queueEvents = new QueueEvents('turns', { connection: { url: TEST_REDIS_URL }, prefix: stack.config.REDIS_PREFIX });
    await queueEvents.waitUntilReady();
  });
  afterAll(async () => {
    proxy.restore();
    await queueEvents.close();
    await direct.end();
    await stack.close();
    await proxy.close();
  });

  it('leaves nothing half-written, answers 503 meanwhile, and retries the step once it is back', async () => {
    const { apiKey } = await stack.createUser('pg-outage');
    // A key never used before the outage: nothing on the API process knows it.
    const unseen = await stack.createUser('pg-outage-unseen');
    const api = apiClient(stack.url, apiKey);
    const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
    const client = await TestWsClient.subscribed(stack.url, { apiKey }, conversationId);
    const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content: markedScripted({ text, tokenDelayMs: 15 }) });
    const turnId = posted.body.turnId as string;
    const failedOnce = new Promise<void>((resolve) => {
      const onDelayed = ({ jobId }: { jobId: string }) => {
        if (jobId !== turnJobId(turnId)) return;
        queueEvents.off('delayed', onDelayed);
        resolve();
      };
      queueEvents.on('delayed', onDelayed);
    });
    await client.waitFor((frame) => frame.type === 'event' && frame.event.type === 'text-delta');

    proxy.cut();

    const refused = await api.post('/v1/conversations', {});
    expect(refused).toMatchObject({ status: 503, body: { error: { code: 'unavailable' } } });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const ready = await api.get('/readyz');
    expect(ready).toMatchObject({ status: 503, body: { checks: { redis: { ok: true }, database: { ok: false, error: expect.any(String) } } } });
    // A key verified before the outage is served from the cache of verified keys; one that
    // needs PostgreSQL to be checked is answered 503.
    await expect(TestWsClient.connect(stack.url, { apiKey: unseen.apiKey })).rejects.toThrow('HTTP 503');
    (await TestWsClient.connect(stack.url, { apiKey })).close();

    // The stream ended and its commit failed (the job went back to wait out its backoff):
    // PostgreSQL holds no part of the step, and no client was told it finished.
    await failedOnce;
    const { rows: messages } = await direct.query(`SELECT role FROM messages WHERE turn_id = $1 AND role = 'assistant'`, [turnId]);
    expect(messages).toEqual([]);
    const { rows: turns } = await direct.query('SELECT status, step, steps FROM turns WHERE id = $1', [turnId]);
    expect(turns).toEqual([{ status: 'running', step: 0, steps: [] }]);
    expect(client.events().filter((event) => event.type === 'step-finish')).toEqual([]);

    proxy.restore();
    const events = await client.waitForTurnEnd(turnId);
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish' });
    // Clients are told to drop what the failed attempt showed, then get the step in full.
    const restart = events.findIndex((event) => event.type === 'turn-start' && event.attempt === 2);
    expect(events[restart + 1]).toMatchObject({ type: 'attempt-discarded', attempt: 1, step: 1 });
    const retried = events.slice(restart + 2);
    expect(
      retried
        .filter((event) => event.type === 'text-delta')
        .map((event) => event.delta)
        .join(''),
    ).toBe(text);
    expect(events.filter((event) => event.type === 'step-finish')).toHaveLength(1);

    const stored = (await api.get(`/v1/conversations/${conversationId}`)).body;
    expect(stored.messages.filter((message: { role: string }) => message.role === 'assistant').map((message: { content: string }) => message.content)).toEqual([text]);
    expect((await api.get('/readyz')).status).toBe(200);
    expect(await checkInvariants(stack.resources.db, { turnIds: [turnId], toolExecutions: [], events })).toEqual({ [turnId]: 'completed' });
    client.close();
  }, 30_000);
});

/**
 * PostgreSQL away for longer than a turn job's retries: the job fails for good, and the worker
 * cannot even mark the turn failed. Once PostgreSQL is back the reconciler runs the job again.
 * The worker is a child process so that the test can wait for its log line saying that
 * marking the turn failed did not work, and only then bring PostgreSQL back.
 */
describe('PostgreSQL away for longer than a job retries', () => {
  let proxy: TcpProxy;
  let stack: TestStack;
  let worker: ServiceProcess;
  let direct: Client;

  beforeAll(async () => {
    proxy = await startPostgresProxy(TEST_POSTGRES_URL);
    stack = await startTestStack({ workers: 0, env: { ...FAULT_ENV, DATABASE_URL: proxy.urlFor(TEST_POSTGRES_URL), RECONCILE_INTERVAL_MS: '500' } });
    worker = await spawnService('worker', stack.childEnv());
    direct = await connectDirect(stack.config.DATABASE_SCHEMA);
  }, 30_000);
  afterAll(async () => {
    proxy.restore();
    await worker.kill('SIGTERM');
    await direct.end();
    await stack.close();
    await proxy.close();
  });

  it('completes the turn once PostgreSQL is back', async () => {
    const { apiKey } = await stack.createUser('long-outage');
    const api = apiClient(stack.url, apiKey);
    const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
    const client = await TestWsClient.subscribed(stack.url, { apiKey }, conversationId);
    const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content: markedScripted({ text: 'survives a long outage', tokenDelayMs: 50 }) });
    const turnId = posted.body.turnId as string;
    await client.waitFor((frame) => frame.type === 'event' && frame.event.turnId === turnId && frame.event.type === 'text-delta');

    proxy.cut();
    // The job uses up its attempts during the outage; the worker leaves the turn to the reconciler.
    await worker.waitForLog((entry) => entry.msg === 'turn job failed' && entry.final === true && entry.jobId === turnJobId(turnId), 40_000);
    const { rows } = await direct.query('SELECT status FROM turns WHERE id = $1', [turnId]);
    expect(rows).toEqual([{ status: 'running' }]);
    expect(await stack.resources.turnQueue.getJobState(turnJobId(turnId))).toBe('failed');

    proxy.restore();
    const events = (await client.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish' });
    const stored = (await api.get(`/v1/conversations/${conversationId}`)).body;
    expect(stored.messages.at(-1).content).toBe('survives a long outage');
    expect(await checkInvariants(stack.resources.db, { turnIds: [turnId], toolExecutions: [], events })).toEqual({ [turnId]: 'completed' });
    client.close();
  }, 50_000);
});
