import { apiClient } from '../../support/http';
import { scripted } from '../../support/scripted';
import { startTestStack, type TestStack } from '../../support/stack';
import { WebhookJobs } from '../../support/webhook-jobs';
import { WebhookReceiver } from '../../support/webhook-receiver';

/**
 * A first retry soon, then a wait past the retry window: the schedule allows exactly two attempts
 * (the jittered second wait, at least 90 s, ends after WEBHOOK_RETRY_FOR_MS).
 */
const RETRY_DELAYS_MS = '100,100000';
const RETRY_FOR_MS = 60_000;
const SCHEDULED_ATTEMPTS = 2;

/**
 * A delivery whose receiver's answers PostgreSQL could not store as they are still ends as its
 * retry schedule says: each attempt counted, the receiver called exactly that many times.
 */
describe('a webhook delivery to a receiver answering with unstorable text', () => {
  let stack: TestStack;
  let jobs: WebhookJobs;
  let hook: WebhookReceiver;

  beforeAll(async () => {
    stack = await startTestStack({
      env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RETRY_DELAYS_MS: RETRY_DELAYS_MS, WEBHOOK_RETRY_FOR_MS: String(RETRY_FOR_MS), WEBHOOK_RELAY_INTERVAL_MS: '100' },
    });
    jobs = await WebhookJobs.follow(stack);
  });
  afterAll(async () => {
    await jobs.close();
    await stack.close();
    await hook?.close();
  });

  it('counts each attempt, keeps a readable lastError and fails the delivery after its scheduled attempts', async () => {
    // A NUL, which PostgreSQL refuses in text, and bytes that are not UTF-8.
    const body = Buffer.concat([Buffer.from('broken\u0000answer '), Buffer.from([0xff, 0xfe, 0xc3]), Buffer.from(' end')]);
    hook = await WebhookReceiver.start([{ status: 500, body }]);
    const { apiKey } = await stack.createUser('unstorable-answer');
    const api = apiClient(stack.url, apiKey);
    const endpoint = (await api.post('/v1/webhooks', { url: hook.url(), events: ['turn.completed'] })).body;
    const conversationId = (await api.post('/v1/conversations', {})).body.id;
    expect((await api.post(`/v1/conversations/${conversationId}/turns`, { content: scripted({ text: 'to a broken receiver' }) })).status).toBe(202);

    await hook.waitFor(1);
    const [pending] = (await api.get(`/v1/webhooks/${endpoint.id}/deliveries`)).body.data;
    // Well within the test's time; an attempt whose failure is not recorded is retried by the job for far longer.
    await jobs.completed(pending.id, 1, 10_000);

    const [delivery] = (await api.get(`/v1/webhooks/${endpoint.id}/deliveries`)).body.data;
    expect(delivery).toMatchObject({ status: 'failed', attempts: SCHEDULED_ATTEMPTS, lastStatusCode: 500, lastError: 'HTTP 500: broken\uFFFDanswer \uFFFD\uFFFD\uFFFD end' });
    expect(hook.received).toHaveLength(SCHEDULED_ATTEMPTS);
    expect(new Set(hook.received.map((webhook) => webhook.headers['webhook-id'])).size).toBe(1);
  });
});
