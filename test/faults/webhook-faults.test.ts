import { Webhook } from 'standardwebhooks';
import { faultProcesses } from '../support/fault-processes';
import { apiClient } from '../support/http';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server';
import { scripted } from '../support/scripted';
import { startTestStack, type TestStack } from '../support/stack';
import { WebhookReceiver, type ReceivedWebhook } from '../support/webhook-receiver';
import { TestWsClient } from '../support/ws-client';

const WEBHOOK_ENV = { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_DELAYS_MS: '2000' };

/**
 * docs/RELIABILITY.md case 40: a receiver that fails while the worker holding its deliveries is
 * SIGKILLed, or while Redis restarts (with its data, or empty): every event still arrives, signed
 * and under the same `webhook-id` on every attempt; a turn's end never waits for its webhooks.
 */
describe('webhook deliveries through faults', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;
  const processes = faultProcesses(() => stack);

  beforeEach(async () => {
    receiver = await WebhookReceiver.start([500]);
    receiver.answers = [500];
  });
  afterEach(async () => {
    await processes.stopAll();
    await receiver.close();
  });

  /** Registers an endpoint for every event at the receiver; returns its secret. */
  async function register(api: ReturnType<typeof apiClient>): Promise<string> {
    const created = await api.post('/v1/webhooks', { url: receiver.url(), events: ['*'] });
    expect(created.status).toBe(201);
    return created.body.secret as string;
  }

  /** Runs a turn to its end; returns its id. */
  async function runTurn(baseUrl: string, apiKey: string, text: string): Promise<string> {
    const api = apiClient(baseUrl, apiKey);
    const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
    const client = await TestWsClient.subscribed(baseUrl, { apiKey }, conversationId);
    const turnId = (await api.post(`/v1/conversations/${conversationId}/turns`, { content: scripted({ text }) })).body.turnId as string;
    await client.waitForTurnEnd(turnId);
    client.close();
    return turnId;
  }

  const eventIdOf = (webhook: ReceivedWebhook) => webhook.headers['webhook-id']!;

  /**
   * Waits until the requests matching `filter` carry `count` events (every attempt of an event
   * carries its `webhook-id`, and an early retry may come before another event's first attempt);
   * returns those requests.
   */
  async function waitForEvents(count: number, filter: (webhook: ReceivedWebhook) => boolean = () => true): Promise<ReceivedWebhook[]> {
    for (let requests = count; ; requests++) {
      const taken = await receiver.waitFor(requests, filter, 60_000);
      if (new Set(taken.map(eventIdOf)).size === count) return taken;
    }
  }

  /** Switches the receiver to 200 and waits until every event id in `ids` was answered so; returns those requests. */
  function acceptUntilAll(ids: Set<string>): Promise<ReceivedWebhook[]> {
    const from = receiver.received.length;
    receiver.answers = [200];
    return waitForEvents(ids.size, (webhook) => receiver.received.indexOf(webhook) >= from && ids.has(eventIdOf(webhook)));
  }

  describe('a worker SIGKILLed with deliveries pending', () => {
    beforeAll(async () => {
      stack = await startTestStack({ workers: 0, env: { ...WEBHOOK_ENV, LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '500' } });
    });
    afterAll(() => stack.close());

    it('delivers every event after a new worker starts, the ones retrying and one recorded while no worker ran', async () => {
      const { apiKey } = await stack.createUser('killed-worker');
      const api = apiClient(stack.url, apiKey);
      const secret = await register(api);
      const victim = await processes.spawn('worker', WEBHOOK_ENV);

      // Three turns end on the victim; each first attempt is refused, so their retries wait in Redis.
      const turnIds = [];
      for (const n of [1, 2, 3]) turnIds.push(await runTurn(stack.url, apiKey, `turn ${n}`));
      const retrying = new Set((await waitForEvents(3)).map(eventIdOf));
      await victim.kill('SIGKILL');

      // With no worker at all, a queued turn is cancelled: its event is committed with the cancel
      // by the API, and waits in the outbox for a worker's relay.
      const conversationId = (await api.post('/v1/conversations', {})).body.id;
      const queued = (await api.post(`/v1/conversations/${conversationId}/turns`, { content: 'never runs' })).body.turnId;
      expect((await api.post(`/v1/turns/${queued}/cancel`)).body.status).toBe('cancelled');
      const [recorded] = (await api.get(`/v1/webhooks/${(await api.get('/v1/webhooks')).body.data[0].id}/deliveries`)).body.data;
      expect(recorded).toMatchObject({ type: 'turn.cancelled', status: 'pending', attempts: 0 });

      await processes.spawn('worker', WEBHOOK_ENV);
      const accepted = await acceptUntilAll(new Set([...retrying, recorded.eventId]));
      const payloads = accepted.filter((webhook) => webhook.headers['webhook-id']).map((webhook) => new Webhook(secret).verify(webhook.body, webhook.headers) as any);
      expect(new Set(payloads.map((payload) => payload.data.turnId))).toEqual(new Set([...turnIds, queued]));
      // Every attempt of an event carried its id; nothing arrived under another.
      const ids = new Set(receiver.received.map(eventIdOf));
      expect(ids).toEqual(new Set([...retrying, recorded.eventId]));
    }, 120_000);
  });

  describe('Redis restarts', () => {
    let redis: PrivateRedis;

    beforeAll(async () => {
      redis = await startPrivateRedis();
      stack = await startTestStack({ env: { ...WEBHOOK_ENV, REDIS_URL: redis.url, WEBHOOK_RELAY_INTERVAL_MS: '200', LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '500' } });
    });
    afterAll(async () => {
      await stack.close();
      await redis.close();
    });

    it.each([
      ['with its data', () => redis.restart()],
      ['empty', () => redis.restartEmpty()],
    ])(
      'delivers the events whose retries were waiting when Redis restarted %s',
      async (_how, restart) => {
        const { apiKey } = await stack.createUser('redis-restart');
        const secret = await register(apiClient(stack.url, apiKey));
        const turnIds = [await runTurn(stack.url, apiKey, 'before the restart one'), await runTurn(stack.url, apiKey, 'before the restart two')];
        const waiting = new Set((await waitForEvents(2)).map(eventIdOf));

        await restart();
        const accepted = await acceptUntilAll(waiting);
        const turns = accepted.map((webhook) => (new Webhook(secret).verify(webhook.body, webhook.headers) as any).data.turnId);
        expect(new Set(turns)).toEqual(new Set(turnIds));

        // And the service goes on: a turn after the restart is delivered too.
        const after = await runTurn(stack.url, apiKey, 'after the restart');
        const [delivered] = await receiver.waitFor(1, (webhook) => JSON.parse(webhook.body).data.turnId === after, 60_000);
        expect(new Webhook(secret).verify(delivered!.body, delivered!.headers)).toMatchObject({ type: 'turn.completed' });
      },
      120_000,
    );
  });
});
