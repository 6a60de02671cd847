import type { Client } from 'pg';
import { checkInvariants } from '../support/invariants';
import { spawnService, type ServiceProcess } from '../support/processes';
import { connectDirect, TEST_POSTGRES_URL, TEST_REDIS_URL } from '../support/services';
import { startPostgresProxy, startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { startToolHttpServer, type ToolHttpServer } from '../support/tool-servers';
import { eventsOfType, startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';

/**
 * A tool's `retries` are for the tool's own failures. PostgreSQL going away while a tool job
 * records its call is Switchyard's trouble: the job waits it out and stores the result it has;
 * the tool is not run again, nor is its call given up as lost.
 */
describe('PostgreSQL away while a tool job records its call', () => {
  let proxy: TcpProxy;
  let server: ToolHttpServer;
  let harness: ToolTurnHarness;
  let worker: ServiceProcess;
  let direct: Client;

  beforeAll(async () => {
    proxy = await startPostgresProxy(TEST_POSTGRES_URL);
    server = await startToolHttpServer();
    harness = await startToolTurnHarness({
      workers: 0,
      env: { DATABASE_URL: proxy.urlFor(TEST_POSTGRES_URL), LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '500' },
      toolFiles: {
        'tools.json': {
          tools: [
            { name: 'charge', description: 'Charges', url: `${server.url}/charge`, inputSchema: { type: 'object' }, timeoutMs: 10_000, retries: 0 },
            { name: 'refund', description: 'Refunds', url: `${server.url}/refund`, inputSchema: { type: 'object' }, timeoutMs: 10_000, retries: 2 },
          ],
        },
      },
    });
    worker = await spawnService('worker', harness.stack.childEnv());
    direct = await connectDirect(harness.stack.config.DATABASE_SCHEMA);
  }, 30_000);
  afterAll(async () => {
    proxy.restore();
    await worker.kill('SIGTERM');
    await direct.end();
    await harness.close();
    await server.close();
    await proxy.close();
  });

  it('a retries: 0 tool whose result write meets the outage runs once and succeeds', async () => {
    // PostgreSQL goes away while the tool runs: the call is marked running, its result is not yet stored.
    server.route('/charge', () => {
      proxy.cut();
      return { body: { charged: 5 } };
    });
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const { turnId } = await harness.postTurn(conversationId, {
      steps: [{ toolCalls: [{ name: 'charge', arguments: {} }] }, { text: 'charged' }],
    });

    const waiting = await worker.waitForLog((entry) => entry.msg === 'tool job waiting for PostgreSQL or Redis');
    expect(waiting.jobId).toMatch(new RegExp(`^tool-${turnId}-s1-0$`));
    const { rows: during } = await direct.query('SELECT status, attempts FROM tool_calls WHERE turn_id = $1', [turnId]);
    expect(during).toEqual([{ status: 'running', attempts: 1 }]);

    proxy.restore();
    const events = (await client.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    expect(eventsOfType(events, 'tool-result')).toEqual([expect.objectContaining({ result: { charged: 5 }, attempts: 1 })]);
    const charges = server.requests.filter((request) => request.path === '/charge');
    expect(charges).toHaveLength(1);
    expect((await harness.api.get(`/v1/turns/${turnId}`)).body.toolCalls).toEqual([expect.objectContaining({ status: 'succeeded', attempts: 1, result: { charged: 5 } })]);
    expect(
      await checkInvariants(harness.stack.resources.db, {
        turnIds: [turnId],
        toolExecutions: server.executions('/charge'),
        events,
      }),
    ).toEqual({ [turnId]: 'completed' });
  }, 40_000);

  it('a retries: 2 tool whose result write meets the outage runs once and succeeds: the outage spends none of its retries', async () => {
    server.route('/refund', () => {
      proxy.cut();
      return { body: { refunded: 3 } };
    });
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const { turnId } = await harness.postTurn(conversationId, {
      steps: [{ toolCalls: [{ name: 'refund', arguments: {} }] }, { text: 'refunded' }],
    });
    const waiting = await worker.waitForLog((entry) => entry.msg === 'tool job waiting for PostgreSQL or Redis' && String(entry.jobId).startsWith(`tool-${turnId}-`));
    expect(waiting.jobId).toBe(`tool-${turnId}-s1-0`);
    proxy.restore();

    const events = (await client.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    expect(eventsOfType(events, 'tool-result')).toEqual([expect.objectContaining({ result: { refunded: 3 }, attempts: 1 })]);
    expect(server.requests.filter((request) => request.path === '/refund')).toHaveLength(1);
    expect((await harness.api.get(`/v1/turns/${turnId}`)).body.toolCalls).toEqual([expect.objectContaining({ status: 'succeeded', attempts: 1, result: { refunded: 3 } })]);
    expect(await checkInvariants(harness.stack.resources.db, { turnIds: [turnId], toolExecutions: server.executions('/refund'), events })).toEqual({ [turnId]: 'completed' });
  }, 40_000);
});

/** The same for a Redis blip: the worker's Redis goes away while its tool job records the call. */
describe('Redis away while a tool job records its call', () => {
  let proxy: TcpProxy;
  let server: ToolHttpServer;
  let harness: ToolTurnHarness;
  let worker: ServiceProcess;

  beforeAll(async () => {
    const redis = new URL(TEST_REDIS_URL);
    proxy = await startTcpProxy({ host: redis.hostname, port: Number(redis.port || 6379) });
    server = await startToolHttpServer();
    harness = await startToolTurnHarness({
      workers: 0,
      env: { LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '500' },
      toolFiles: {
        'tools.json': { tools: [{ name: 'charge', description: 'Charges', url: `${server.url}/charge`, inputSchema: { type: 'object' }, timeoutMs: 10_000, retries: 0 }] },
      },
    });
    // Only the worker goes through the proxy: the API and the test's client keep their Redis.
    worker = await spawnService('worker', harness.stack.childEnv({ REDIS_URL: proxy.urlFor(TEST_REDIS_URL) }));
  }, 30_000);
  afterAll(async () => {
    proxy.restore();
    await worker.kill('SIGTERM');
    await harness.close();
    await server.close();
    await proxy.close();
  });

  it('a retries: 0 tool whose worker loses Redis after the tool answered runs once and succeeds', async () => {
    server.route('/charge', () => {
      proxy.cut();
      return { body: { charged: 7 } };
    });
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const { turnId } = await harness.postTurn(conversationId, { steps: [{ toolCalls: [{ name: 'charge', arguments: {} }] }, { text: 'charged' }] });
    await worker.waitForLog((entry) => entry.msg === 'redis connection error');
    proxy.restore();

    const events = (await client.waitForTurnEnd(turnId, 60_000)).filter((event) => event.turnId === turnId);
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    // A job redelivered after the blip may announce the stored result again (clients key
    // results by toolCallId): always the one result, of the one run.
    const results = eventsOfType(events, 'tool-result');
    expect(results.length).toBeGreaterThanOrEqual(1);
    for (const result of results) expect(result).toMatchObject({ toolCallId: results[0].toolCallId, result: { charged: 7 }, attempts: 1 });
    expect(server.requests.filter((request) => request.path === '/charge')).toHaveLength(1);
    expect((await harness.api.get(`/v1/turns/${turnId}`)).body.toolCalls).toEqual([expect.objectContaining({ status: 'succeeded', attempts: 1, result: { charged: 7 } })]);
    expect(await checkInvariants(harness.stack.resources.db, { turnIds: [turnId], toolExecutions: server.executions('/charge'), events })).toEqual({ [turnId]: 'completed' });
  }, 90_000);
});
