import { eventsOfTurn, startedAttempts, visibleStepTexts } from '../support/client-view';
import { faultProcesses } from '../support/fault-processes';
import { checkInvariants } from '../support/invariants';
import { apiClient } from '../support/http';
import { spawnService, type ServiceProcess } from '../support/processes';
import { startPrivateRedis } from '../support/redis-server';
import { startTestStack } from '../support/stack';
import { startToolHttpServer, type ToolHttpServer } from '../support/tool-servers';
import { eventsOfType, scripted, startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';
import { TestWsClient } from '../support/ws-client';

/**
 * docs/RELIABILITY.md case 5 and the API side of a deploy: SIGTERM to real worker and API
 * processes. A worker stops taking jobs, finishes what it can within SHUTDOWN_GRACE_MS, hands
 * the rest back and exits; an API process closes its websockets with 1012, and a client that
 * resubscribes elsewhere with `after` misses nothing. Even with Redis down, a stopping process
 * exits by its close deadline.
 */
describe('graceful shutdown', () => {
  const GRACE_MS = 1_000;
  let server: ToolHttpServer;
  let harness: ToolTurnHarness;
  const processes = faultProcesses(() => harness.stack);

  beforeAll(async () => {
    server = await startToolHttpServer();
    server.route('/record', { delayMs: 300, body: { recorded: true } });
    harness = await startToolTurnHarness({
      workers: 0,
      env: { LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '500', SHUTDOWN_GRACE_MS: String(GRACE_MS) },
      toolFiles: {
        'tools.json': {
          tools: [
            {
              name: 'record',
              description: 'Records a number',
              url: `${server.url}/record`,
              inputSchema: { type: 'object', properties: { n: { type: 'integer' } } },
              timeoutMs: 5_000,
              retries: 0,
            },
          ],
        },
      },
    });
  });
  afterEach(() => processes.stopAll());
  afterAll(async () => {
    await harness.close();
    await server.close();
  });

  /** SIGTERM, and the exit code. How long past the grace period a process takes to exit is `npm run bench -- deadlines`. */
  const terminate = (child: ServiceProcess) => child.kill('SIGTERM');
  const words = (prefix: string, count: number) => Array.from({ length: count }, (_, i) => `${prefix}${i}`).join(' ');

  it('drains a worker on SIGTERM: what ends within the grace period finishes there, the rest is handed back at once', async () => {
    const draining = await processes.spawn('worker');
    const [shortConversation, longConversation] = [await harness.newConversation(), await harness.newConversation()];
    const shortClient = await harness.subscribe(shortConversation);
    const longClient = await harness.subscribe(longConversation);
    // 0.2 s of stream left when SIGTERM comes, and 2.5 s: one within the grace period, one not.
    const shortAnswer = words('short', 20);
    const longAnswer = words('long', 100);
    const short = await harness.postTurn(shortConversation, { text: shortAnswer, tokenDelayMs: 10 });
    const long = await harness.postTurn(longConversation, { text: longAnswer, tokenDelayMs: 25 });
    const streaming = (client: TestWsClient, turnId: string) =>
      client.waitFor((frame) => frame.type === 'event' && frame.event.turnId === turnId && frame.event.type === 'text-delta');
    await Promise.all([streaming(shortClient, short.turnId), streaming(longClient, long.turnId)]);

    expect(await terminate(draining)).toBe(0);
    // The short turn finished on the draining worker, in its first attempt.
    const shortEvents = eventsOfTurn(await shortClient.waitForTurnEnd(short.turnId), short.turnId);
    expect(shortEvents.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    expect(startedAttempts(shortEvents)).toEqual([1]);

    // The long one was handed back unfinished; a new worker takes it from its start.
    expect((await harness.api.get(`/v1/turns/${long.turnId}`)).body.status).not.toBe('completed');
    await processes.addWorker();
    const longEvents = eventsOfTurn(await longClient.waitForTurnEnd(long.turnId), long.turnId);
    expect(longEvents.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    expect(startedAttempts(longEvents)).toEqual([1, 2]);
    expect(eventsOfType(longEvents, 'attempt-discarded')).toEqual([expect.objectContaining({ attempt: 1, step: 1 })]);
    expect(visibleStepTexts(longEvents)).toEqual(new Map([[1, longAnswer]]));
    expect(await checkInvariants(harness.stack.resources.db, { turnIds: [short.turnId, long.turnId], toolExecutions: [], events: [...shortEvents, ...longEvents] })).toEqual({
      [short.turnId]: 'completed',
      [long.turnId]: 'completed',
    });
  });

  it('loses and duplicates nothing when every worker is replaced one by one under load', async () => {
    const initial = await Promise.all([processes.spawn('worker'), processes.spawn('worker')]);
    const turns = await Promise.all(
      Array.from({ length: 8 }, async (_, i) => {
        const conversationId = await harness.newConversation();
        const client = await harness.subscribe(conversationId);
        // Two and a half seconds of stream: longer than the grace period.
        const answer = words(`t${i}w`, 100);
        const scenario = { steps: [{ toolCalls: [{ name: 'record', arguments: { n: i } }] }, { text: answer, tokenDelayMs: 25 }] };
        const { turnId } = await harness.postTurn(conversationId, scenario);
        return { conversationId, client, answer, turnId };
      }),
    );
    await Promise.all(
      turns.map(({ client, turnId }) =>
        client.waitFor((frame) => frame.type === 'event' && frame.event.turnId === turnId && frame.event.type === 'step-start' && frame.event.step === 2),
      ),
    );

    // A rolling restart: start a replacement, then stop an old one, for every worker.
    for (const old of initial) {
      await processes.addWorker();
      expect(await terminate(old)).toBe(0);
    }

    const statuses: Record<string, string> = {};
    const seen: any[] = [];
    let restarted = 0;
    for (const { client, turnId, answer, conversationId } of turns) {
      const events = eventsOfTurn(await client.waitForTurnEnd(turnId), turnId);
      seen.push(...events);
      statuses[turnId] = 'completed';
      expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
      expect(eventsOfType(events, 'turn-finish')).toHaveLength(1);
      expect(eventsOfType(events, 'tool-result')).toHaveLength(1);
      if (startedAttempts(events).length > 1) restarted++;
      // What every client shows, once discarded attempts are dropped, is what is stored.
      expect(visibleStepTexts(events).get(2)).toBe(answer);
      const stored = (await harness.api.get(`/v1/conversations/${conversationId}`)).body.messages.map((message: any) => message.role);
      expect(stored).toEqual(['user', 'assistant', 'tool', 'assistant']);
      expect((await harness.api.get(`/v1/conversations/${conversationId}`)).body.messages[3].content).toBe(answer);
      const seqs = client.events().map((event) => event.seq);
      expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    }
    // The restart did interrupt turns (else it proved nothing), and none was lost or doubled.
    expect(restarted).toBeGreaterThan(0);
    expect(await checkInvariants(harness.stack.resources.db, { turnIds: turns.map(({ turnId }) => turnId), toolExecutions: server.executions('/record'), events: seen })).toEqual(
      statuses,
    );
  });

  it('drains an API process: requests under way finish, SSE streams end after their last event, websockets close with 1012; a client resuming on another one misses nothing', async () => {
    const leaving = await processes.spawn('api');
    await processes.addWorker();
    const conversationId = await harness.newConversation();
    const first = await TestWsClient.subscribed(leaving.url, { apiKey: harness.apiKey }, conversationId);
    const answer = words('gw', 120);
    const { turnId } = await harness.postTurn(conversationId, { text: answer, tokenDelayMs: 20 });
    await first.waitFor(() => eventsOfType(first.events(), 'text-delta').length >= 5);
    const sse = fetch(`${leaving.url}/v1/turns/${turnId}/events`, { headers: { authorization: `Bearer ${harness.apiKey}` } }).then((response) => response.text());
    // An invocation whose tool (300 ms) is still answering when the process is told to stop.
    const before = server.requests.length;
    const invoked = apiClient(leaving.url, harness.apiKey).post('/v1/tools/record/invoke', { params: { n: 7 } });
    await server.waitForRequests(before + 1);

    const code = await terminate(leaving);
    expect((await first.whenClosed()).code).toBe(1012);
    expect(code).toBe(0);
    expect(await invoked).toMatchObject({ status: 200, body: { result: { recorded: true } } });
    const blocks = (await sse).trimEnd().split('\n\n');
    expect(blocks.length).toBeGreaterThan(1);
    expect(blocks.at(-1)).toMatch(/^id: \d+\nevent: text-delta\n/);

    const received = first.events();
    const after = received.at(-1).seq;
    // The stack's own API process is the one that stays.
    const second = await TestWsClient.connect(harness.stack.url, { apiKey: harness.apiKey });
    second.send({ type: 'subscribe', conversationId, after });
    const all = [...received, ...(await second.waitForTurnEnd(turnId))];
    second.close();

    expect(all.map((event) => event.seq)).toEqual(all.map((_, i) => i + 1));
    expect(all.at(-1)).toMatchObject({ type: 'turn-finish', turnId });
    expect(visibleStepTexts(all)).toEqual(new Map([[1, answer]]));
  });

  it('exits by its close deadline while Redis is down; the turn it held finishes elsewhere', async () => {
    // A Redis of its own, to stop: the shared one serves other test files.
    const redis = await startPrivateRedis();
    const stack = await startTestStack({
      workers: 0,
      env: { REDIS_URL: redis.url, LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '500', SHUTDOWN_GRACE_MS: String(GRACE_MS) },
    });
    let redisDown = false;
    try {
      const stranded = processes.track(await spawnService('worker', stack.childEnv()));
      const { apiKey } = await stack.createUser();
      const api = apiClient(stack.url, apiKey);
      const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
      const client = await TestWsClient.subscribed(stack.url, { apiKey }, conversationId);
      const answer = words('outage', 60);
      const turnId = (await api.post(`/v1/conversations/${conversationId}/turns`, { content: scripted({ text: answer, tokenDelayMs: 25 }) })).body.turnId;
      await client.waitFor((frame) => frame.type === 'event' && frame.event.type === 'text-delta');

      await redis.stop();
      redisDown = true;
      // Closing BullMQ and Redis connections would wait for Redis for good: the process gives
      // up after its grace period and CLOSE_MARGIN_MS, and says so.
      expect(await terminate(stranded)).toBe(1);
      expect(stranded.stderr()).toContain('not closed within');

      await redis.start();
      redisDown = false;
      await stack.addWorker();
      const events = eventsOfTurn(await client.waitForTurnEnd(turnId), turnId);
      client.close();
      expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
      expect(visibleStepTexts(events)).toEqual(new Map([[1, answer]]));
      expect(await checkInvariants(stack.resources.db, { turnIds: [turnId], toolExecutions: [], events })).toEqual({ [turnId]: 'completed' });
    } finally {
      if (redisDown) await redis.start();
      await stack.close();
      await redis.close();
    }
  }, 45_000);
});
