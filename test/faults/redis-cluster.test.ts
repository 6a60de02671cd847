import { checkInvariants } from '../support/invariants';
import { apiClient } from '../support/http';
import { spawnService, type ServiceProcess } from '../support/processes';
import { startRedisCluster, type PrivateRedisCluster } from '../support/redis-cluster';
import { startTestStack, type TestStack } from '../support/stack';
import { startToolHttpServer, writeToolsDir, type ToolHttpServer } from '../support/tool-servers';
import { scripted } from '../support/tool-turns';
import { TestWsClient } from '../support/ws-client';

const words = (tag: string, count: number) => Array.from({ length: count }, (_, i) => `${tag}w${i}`).join(' ');

/** Three parallel calls of the `record` HTTP tool, then a streamed answer. */
const toolTurn = (tag: string, text: string) => ({
  steps: [{ toolCalls: [1, 2, 3].map((amount) => ({ name: 'record', arguments: { amount } })) }, { text, tokenDelayMs: 15 }],
});

/**
 * docs/RELIABILITY.md case 33: Switchyard on a Redis Cluster of three masters (REDIS_CLUSTER_NODES),
 * with real API and worker processes. Conversations' event logs spread over the masters (each
 * conversation's keys on its own slot), BullMQ's keys share the hash tag `{REDIS_PREFIX}`, and
 * gateways follow conversations with sharded pub/sub. Then the master serving the queues and a
 * conversation in mid-stream is SIGKILLed, the cluster goes down (no replica takes over), and
 * the node is started again from its AOF: nothing accepted may be lost.
 */
describe('on a Redis Cluster', () => {
  let cluster: PrivateRedisCluster;
  let server: ToolHttpServer;
  let stack: TestStack;
  let api: ServiceProcess;
  let worker: ServiceProcess;
  const clients: TestWsClient[] = [];

  beforeAll(async () => {
    cluster = await startRedisCluster();
    server = await startToolHttpServer();
    server.route('/record', (request) => ({ body: { recorded: request.body }, delayMs: 100 }));
    const toolsDir = await writeToolsDir({
      'tools.json': {
        tools: [
          {
            name: 'record',
            description: 'records an amount',
            url: `${server.url}/record`,
            inputSchema: { type: 'object', properties: { amount: { type: 'integer' } } },
            retries: 0,
          },
        ],
      },
    });
    stack = await startTestStack({
      workers: 0,
      redisClusterNodes: cluster.nodes,
      env: { TOOLS_DIR: toolsDir, LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '500' },
    });
    [api, worker] = await Promise.all([spawnService('api', stack.childEnv()), spawnService('worker', stack.childEnv())]);
  }, 60_000);
  afterAll(async () => {
    for (const client of clients) client.close();
    // A worker waiting for a master to come back would wait in its close as well.
    await Promise.all([api, worker].map((service) => service?.kill('SIGKILL')));
    await stack?.close();
    await server?.close();
    await cluster?.close();
  });

  const subscribed = async (baseUrl: string, apiKey: string, conversationId: string) => {
    const client = await TestWsClient.connect(baseUrl, { apiKey });
    clients.push(client);
    client.send({ type: 'subscribe', conversationId });
    await client.waitFor((frame) => frame.type === 'subscribed' || frame.type === 'error');
    expect(client.frames.filter((frame) => frame.type === 'error')).toEqual([]);
    return client;
  };
  const conversationKey = (conversationId: string) => `${stack.config.REDIS_PREFIX}:conv:{${conversationId}}:seq`;
  const queueKey = () => `${stack.resources.queuePrefix}:turns:meta`;

  /** Each client saw its conversation's events once each, in order, and ends with the stored text. */
  const expectWholeStreams = async (runs: { turnId: string; clients: TestWsClient[] }[]) => {
    for (const run of runs) {
      for (const client of run.clients) {
        const events = await client.waitForTurnEnd(run.turnId, 60_000);
        expect(client.frames.filter((frame) => frame.type === 'error')).toEqual([]);
        expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
        expect(events.at(-1)).toMatchObject({ type: 'turn-finish', turnId: run.turnId });
      }
    }
    // Every client, of either gateway, shows each committed step as stored; no tool call whose
    // result was stored ran again.
    const statuses: string[] = [];
    for (const run of runs) {
      for (const client of run.clients) {
        const status = await checkInvariants(stack.resources.db, { turnIds: [run.turnId], toolExecutions: server.executions('/record'), events: client.events() });
        statuses.push(status[run.turnId]!);
      }
    }
    expect(new Set(statuses)).toEqual(new Set(['completed']));
  };

  it('runs turns with parallel tools, their keys spread over the masters and the queues on one slot', async () => {
    expect(stack.resources.queuePrefix).toBe(`{${stack.config.REDIS_PREFIX}}`);
    const { apiKey } = await stack.createUser('cluster');
    const http = apiClient(api.url, apiKey);
    // Two conversations on each master, so the test crosses slots whatever ids come out: six
    // random ones all land on one master about once in 243 runs.
    const conversationIds: string[] = [];
    const perMaster = new Map<number, number>();
    while (conversationIds.length < 6) {
      const conversationId = (await http.post('/v1/conversations', {})).body.id as string;
      const master = await cluster.masterOf(conversationKey(conversationId));
      if ((perMaster.get(master) ?? 0) >= 2) continue;
      perMaster.set(master, (perMaster.get(master) ?? 0) + 1);
      conversationIds.push(conversationId);
    }
    const runs: { turnId: string; clients: TestWsClient[] }[] = [];
    for (const [n, conversationId] of conversationIds.entries()) {
      const clientsOf = [await subscribed(api.url, apiKey, conversationId), await subscribed(stack.url, apiKey, conversationId)];
      const posted = await http.post(`/v1/conversations/${conversationId}/turns`, { content: scripted(toolTurn(`a${n}`, words(`a${n}`, 20))) });
      expect(posted.status).toBe(202);
      runs.push({ turnId: posted.body.turnId as string, clients: clientsOf });
    }
    await expectWholeStreams(runs);
    expect(server.executions('/record')).toHaveLength(18);
  }, 90_000);

  it('loses nothing accepted when the master of the queues and of a conversation in mid-stream is killed and comes back', async () => {
    const { apiKey } = await stack.createUser('cluster-kill');
    const http = apiClient(api.url, apiKey);
    const victim = await cluster.masterOf(queueKey());
    // Conversations until one lives on the victim and one on each other master.
    const byMaster = new Map<number, string>();
    while (byMaster.size < 3) {
      const conversationId = (await http.post('/v1/conversations', {})).body.id as string;
      const master = await cluster.masterOf(conversationKey(conversationId));
      if (!byMaster.has(master)) byMaster.set(master, conversationId);
    }
    const busy = byMaster.get(victim)!;
    // A conversation on the victim that is quiet while it is down.
    let quiet: string | undefined;
    while (!quiet) {
      const conversationId = (await http.post('/v1/conversations', {})).body.id as string;
      if ((await cluster.masterOf(conversationKey(conversationId))) === victim) quiet = conversationId;
    }
    const quietClients = [await subscribed(api.url, apiKey, quiet), await subscribed(stack.url, apiKey, quiet)];
    const executionsBefore = server.executions('/record').length;
    const runs: { turnId: string; conversationId: string; clients: TestWsClient[] }[] = [];
    for (const [master, conversationId] of byMaster) {
      const clientsOf = [await subscribed(api.url, apiKey, conversationId), await subscribed(stack.url, apiKey, conversationId)];
      const text = words(`k${master}`, conversationId === busy ? 150 : 60);
      const posted = await http.post(`/v1/conversations/${conversationId}/turns`, { content: scripted(toolTurn(`k${master}`, text)) });
      expect(posted.status).toBe(202);
      runs.push({ turnId: posted.body.turnId as string, conversationId, clients: clientsOf });
    }
    const busyRun = runs.find((run) => run.conversationId === busy)!;
    await busyRun.clients[0]!.waitFor((frame) => frame.type === 'event' && frame.event.type === 'text-delta', 30_000);

    await cluster.kill(victim);
    // Cut mid-stream: the busy turn had not finished when its master died.
    expect(busyRun.clients[0]!.events().some((event) => event.type === 'turn-finish' && event.turnId === busyRun.turnId)).toBe(false);
    // Without a replica to promote, the other masters declare it failed and refuse every slot.
    await cluster.waitForState('fail');
    await cluster.start(victim);
    await cluster.waitForState('ok');
    // An event appended the moment the slot is served again, likely before the gateways'
    // sharded subscriptions are back: they must find it in the log once they are.
    const seq = await stack.resources.eventLog.append({ type: 'text-delta', delta: 'while you were away', conversationId: quiet, turnId: 'turn_outside' });
    for (const client of quietClients) {
      const frame = await client.waitFor((received) => received.type === 'event' && received.event.conversationId === quiet, 30_000);
      expect(frame.event).toMatchObject({ seq, delta: 'while you were away' });
    }

    await expectWholeStreams(runs);
    // Every call ran at least once; none ran again after its result was stored (checkInvariants).
    expect(server.executions('/record').length).toBeGreaterThanOrEqual(executionsBefore + 9);
    // The API answers again on every path, and later turns run.
    expect((await fetch(`${api.url}/readyz`)).status).toBe(200);
    const posted = await http.post(`/v1/conversations/${busy}/turns`, { content: scripted({ text: 'after the outage' }) });
    expect(posted).toMatchObject({ status: 202 });
    const after = posted.body.turnId as string;
    const events = await busyRun.clients[0]!.waitForTurnEnd(after, 30_000);
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish', turnId: after });
    expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
  }, 150_000);
});
