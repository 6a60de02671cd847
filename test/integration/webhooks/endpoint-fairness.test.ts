import { apiClient } from '../../support/http';
import { scripted } from '../../support/scripted';
import { startTestStack, type TestStack } from '../../support/stack';
import { WebhookJobs } from '../../support/webhook-jobs';
import { WebhookReceiver } from '../../support/webhook-receiver';
import { TestWsClient } from '../../support/ws-client';

const CONCURRENCY = 4;
const MAX_IN_FLIGHT_PER_ENDPOINT = 2;
/** Longer than the test: no hanging attempt times out (and frees its slot) while it runs. */
const ATTEMPT_TIMEOUT_MS = 30_000;
/** More deliveries than the worker has slots. */
const SLOW_USER_TURNS = CONCURRENCY + 2;

/**
 * One user's receiver that never answers holds at most WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT of a
 * worker's WEBHOOK_CONCURRENCY slots: another user's webhook goes out while it hangs, and the
 * slow user's deliveries that waited for a slot are all sent once it answers, each in one attempt.
 */
describe('webhook attempts per endpoint', () => {
  let stack: TestStack;
  let jobs: WebhookJobs;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    stack = await startTestStack({
      env: {
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_CONCURRENCY: String(CONCURRENCY),
        WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT: String(MAX_IN_FLIGHT_PER_ENDPOINT),
        WEBHOOK_TIMEOUT_MS: String(ATTEMPT_TIMEOUT_MS),
        WEBHOOK_RELAY_INTERVAL_MS: '100',
      },
    });
    jobs = await WebhookJobs.follow(stack);
  });
  afterAll(async () => {
    // Hanging requests first: the worker's close waits for the attempts in flight.
    for (const receiver of receivers) await receiver.close();
    await jobs.close();
    await stack.close();
  });

  async function userWithEndpoint(receiver: WebhookReceiver) {
    receivers.push(receiver);
    const { apiKey } = await stack.createUser('fairness');
    const api = apiClient(stack.url, apiKey);
    const endpoint = (await api.post('/v1/webhooks', { url: receiver.url(), events: ['turn.completed'] })).body as { id: string };
    return {
      api,
      endpoint,
      /** Runs a turn to its end (its delivery is recorded in the commit of that end). */
      async runTurn() {
        const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
        const client = await TestWsClient.subscribed(stack.url, { apiKey }, conversationId);
        const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content: scripted({ text: 'done' }) });
        expect(posted.status).toBe(202);
        await client.waitForTurnEnd(posted.body.turnId);
        client.close();
      },
    };
  }

  it("sends another user's webhook while one endpoint's requests hang, and that endpoint's deliveries once it answers", async () => {
    const slowHook = await WebhookReceiver.start(['hang']);
    const slow = await userWithEndpoint(slowHook);
    for (let turn = 0; turn < SLOW_USER_TURNS; turn++) await slow.runTurn();
    await slowHook.waitFor(MAX_IN_FLIGHT_PER_ENDPOINT);

    const otherHook = await WebhookReceiver.start([200]);
    const other = await userWithEndpoint(otherHook);
    await other.runTurn();
    // Well before a hanging attempt could time out: without the cap the slow endpoint holds every slot until then.
    await otherHook.waitFor(1, undefined, ATTEMPT_TIMEOUT_MS / 2);
    expect(slowHook.open).toBe(MAX_IN_FLIGHT_PER_ENDPOINT);
    expect(slowHook.received).toHaveLength(MAX_IN_FLIGHT_PER_ENDPOINT);
    expect((await stack.resources.metrics.webhookAttemptsDeferred.get()).values[0]!.value).toBeGreaterThan(0);

    slowHook.answers = [200];
    slowHook.answerHanging(200);
    const deliveries = (await slow.api.get(`/v1/webhooks/${slow.endpoint.id}/deliveries`)).body.data as { id: string }[];
    expect(deliveries).toHaveLength(SLOW_USER_TURNS);
    for (const delivery of deliveries) await jobs.completed(delivery.id);

    const settled = (await slow.api.get(`/v1/webhooks/${slow.endpoint.id}/deliveries`)).body.data;
    // Waiting for a slot is not an attempt: each delivery took exactly one.
    expect(settled.map((delivery: any) => [delivery.status, delivery.attempts])).toEqual(deliveries.map(() => ['delivered', 1]));
    expect(slowHook.received).toHaveLength(SLOW_USER_TURNS);
    expect(new Set(slowHook.received.map((webhook) => webhook.headers['webhook-id'])).size).toBe(SLOW_USER_TURNS);
    expect(slowHook.mostOpen).toBe(MAX_IN_FLIGHT_PER_ENDPOINT);
  }, 60_000);
});
