import { apiClient } from '../support/http';
import { checkInvariants } from '../support/invariants';
import { waitForNoJobLeft } from '../support/job-counts';
import { spawnService, type ServiceProcess } from '../support/processes';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server';
import { markedScripted } from '../support/scripted';
import { startTestStack, type TestStack } from '../support/stack';
import { TestWsClient } from '../support/ws-client';

const LONG_TEXT = Array.from({ length: 100 }, (_, i) => `part${i}`).join(' ');

/**
 * docs/RELIABILITY.md case 6: Redis restarts with its data (AOF). Real API and worker processes
 * must reconnect by themselves, the turn in flight must complete, and no job may be stuck.
 */
describe('Redis restarts with its data', () => {
  let redis: PrivateRedis;
  let stack: TestStack;
  let api: ServiceProcess;
  let worker: ServiceProcess;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    stack = await startTestStack({ workers: 0, env: { REDIS_URL: redis.url, LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '500' } });
    [api, worker] = await Promise.all([spawnService('api', stack.childEnv()), spawnService('worker', stack.childEnv())]);
  }, 30_000);
  afterAll(async () => {
    // Nothing is left to drain; and a worker told to stop while a Redis connection of its
    // waits to reconnect would not exit (BullMQ waits for an 'end' ioredis never emits then).
    await Promise.all([api, worker].map((service) => service?.kill('SIGKILL')));
    await stack.close();
    await redis.close();
  });

  it('every process reconnects by itself; the turn in flight completes and later turns run', async () => {
    const { apiKey } = await stack.createUser('restart');
    const http = apiClient(api.url, apiKey);
    const conversationId = (await http.post('/v1/conversations', {})).body.id as string;
    const client = await TestWsClient.subscribed(api.url, { apiKey }, conversationId);
    const inFlight = (await http.post(`/v1/conversations/${conversationId}/turns`, { content: markedScripted({ text: LONG_TEXT, tokenDelayMs: 15 }) })).body.turnId as string;
    await client.waitFor((frame) => frame.type === 'event' && frame.event.type === 'text-delta');

    await redis.restart();

    // The gateway's subscriber came back on the same websocket: every event once, in order.
    const events = await client.waitForTurnEnd(inFlight);
    expect(client.frames.filter((frame) => frame.type === 'error')).toEqual([]);
    expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish', turnId: inFlight });
    const lastStart = events.map((event) => event.type).lastIndexOf('turn-start');
    const shown = events
      .slice(lastStart)
      .filter((event) => event.type === 'text-delta')
      .map((event) => event.delta)
      .join('');
    expect(shown).toBe(LONG_TEXT);

    // Both processes' fail-fast connections are back; then turns with tools run through both
    // BullMQ workers of the worker process.
    const restored = (entry: Record<string, unknown>) => entry.msg === 'redis connection restored';
    await Promise.all([api.waitForLog(restored), worker.waitForLog(restored)]);
    expect((await fetch(`${api.url}/readyz`)).status).toBe(200);
    expect((await fetch(`${worker.url}/readyz`)).status).toBe(200);
    const later = await Promise.all(
      [1, 2, 3].map(async (n) => {
        const id = (await http.post('/v1/conversations', {})).body.id as string;
        client.send({ type: 'subscribe', conversationId: id });
        await client.waitFor((frame) => frame.type === 'subscribed' && frame.conversationId === id);
        const scenario = { steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: `${n}+${n}` } }] }, { text: `answer ${n}` }] };
        const posted = await http.post(`/v1/conversations/${id}/turns`, { content: markedScripted(scenario) });
        expect(posted.status).toBe(202);
        return posted.body.turnId as string;
      }),
    );
    for (const turnId of later) {
      const ended = (await client.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
      expect(ended.at(-1)).toMatchObject({ type: 'turn-finish' });
    }

    const stored = (await http.get(`/v1/conversations/${conversationId}`)).body;
    expect(stored.messages.filter((message: { role: string }) => message.role === 'assistant').map((message: { content: string }) => message.content)).toEqual([LONG_TEXT]);
    const statuses = await checkInvariants(stack.resources.db, { turnIds: [inFlight, ...later], toolExecutions: [], events: client.events() });
    expect(new Set(Object.values(statuses))).toEqual(new Set(['completed']));
    // No job is left behind in any state that would still run.
    await waitForNoJobLeft(stack.resources.turnQueue);
    client.close();
  }, 30_000);
});
