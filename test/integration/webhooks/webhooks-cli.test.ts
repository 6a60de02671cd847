import { Webhook } from 'standardwebhooks';
import { apiClient } from '../../support/http';
import { runToExit } from '../../support/processes';
import { scripted } from '../../support/scripted';
import { startTestStack, type TestStack } from '../../support/stack';
import { WebhookJobs } from '../../support/webhook-jobs';
import { WebhookReceiver } from '../../support/webhook-receiver';

/** `npm run cli -- webhooks …` against a running API, as a child process. */
describe('the webhooks CLI', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;
  let jobs: WebhookJobs;
  let apiKey: string;

  beforeAll(async () => {
    stack = await startTestStack({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RELAY_INTERVAL_MS: '100' } });
    receiver = await WebhookReceiver.start();
    jobs = await WebhookJobs.follow(stack);
    apiKey = (await stack.createUser('cli-webhooks')).apiKey;
  });
  afterAll(async () => {
    await jobs.close();
    await stack.close();
    await receiver.close();
  });

  const cli = (...args: string[]) => runToExit('workers/cli.ts', stack.childEnv({ LOG_LEVEL: 'silent' }), ['webhooks', ...args, '--url', stack.url, '--key', apiKey]);
  const json = async (...args: string[]) => {
    const run = await cli(...args);
    expect([run.code, run.stderr]).toEqual([0, '']);
    return JSON.parse(run.stdout);
  };

  it('adds an endpoint, lists it, shows its deliveries and redelivers one', async () => {
    const added = await json('add', receiver.url(), '--events', 'turn.completed,turn.failed', '--description', 'from the CLI');
    expect(added).toMatchObject({ url: receiver.url(), events: ['turn.completed', 'turn.failed'], description: 'from the CLI', secret: expect.stringMatching(/^whsec_/) });
    expect((await json('list')).data).toEqual([expect.objectContaining({ id: added.id })]);

    const api = apiClient(stack.url, apiKey);
    const conversationId = (await api.post('/v1/conversations', {})).body.id;
    await api.post(`/v1/conversations/${conversationId}/turns`, { content: scripted({ text: 'for the CLI' }) });
    const [first] = await receiver.waitFor(1);
    expect(new Webhook(added.secret).verify(first!.body, first!.headers)).toMatchObject({ type: 'turn.completed' });

    const [delivery] = (await json('deliveries', added.id)).data;
    await jobs.completed(delivery.id);
    expect((await json('deliveries', added.id)).data[0]).toMatchObject({ id: delivery.id, status: 'delivered', attempts: 1 });
    expect(await json('redeliver', added.id, delivery.id)).toMatchObject({ id: delivery.id, status: 'pending' });
    const [, second] = await receiver.waitFor(2);
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
  });

  it('names what is missing, and prints an error answer as one line', async () => {
    const missing = await cli('redeliver', 'wh_only');
    expect([missing.code, missing.stderr.trim()]).toEqual([1, expect.stringContaining('usage: npm run cli -- webhooks redeliver <webhookId> <deliveryId>')]);
    const refused = await cli('add', 'ftp://example.com/hook');
    expect(refused.code).toBe(1);
    expect(refused.stderr.trim().split('\n')).toEqual([expect.stringContaining('only http:// and https://')]);
    const unknown = await cli('deliveries', 'wh_nope');
    expect([unknown.code, unknown.stderr.trim().split('\n')]).toEqual([1, [expect.stringContaining('webhook not found')]]);
  });
});
