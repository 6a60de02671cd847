import { apiClient } from '../../support/http';
import { runToExit } from '../../support/processes';
import { scripted } from '../../support/scripted';
import { startTestStack, type TestStack } from '../../support/stack';
import { WebhookReceiver } from '../../support/webhook-receiver';

/** `npm run cli -- agents list | show` against a running API, and an agent's turn as its webhook tells it. */
describe('agents from the CLI and in webhooks', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;
  let apiKey: string;

  beforeAll(async () => {
    stack = await startTestStack({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RELAY_INTERVAL_MS: '100' } });
    receiver = await WebhookReceiver.start();
    apiKey = (await stack.createUser('cli-agents')).apiKey;
  });
  afterAll(async () => {
    await stack.close();
    await receiver.close();
  });

  const json = async (...args: string[]) => {
    const run = await runToExit('workers/cli.ts', stack.childEnv({ LOG_LEVEL: 'silent' }), ['agents', ...args, '--url', stack.url, '--key', apiKey]);
    expect([run.code, run.stderr]).toEqual([0, '']);
    return JSON.parse(run.stdout);
  };

  it('lists and shows agents, and a turn on one carries agentId and agentVersion in its webhook', async () => {
    const api = apiClient(stack.url, apiKey);
    const agent = (await api.post('/v1/agents', { name: 'cli-agent', instructions: 'First.' })).body;
    await api.patch(`/v1/agents/${agent.id}`, { instructions: 'Second.' });
    expect((await json('list')).data).toEqual([expect.objectContaining({ id: agent.id, version: 2 })]);
    expect(await json('show', agent.id)).toMatchObject({ id: agent.id, version: 2, instructions: 'Second.' });
    expect(await json('show', agent.id, '--version', '1')).toMatchObject({ version: 1, instructions: 'First.' });

    await api.post('/v1/webhooks', { url: receiver.url(), events: ['turn.completed'] });
    const conversationId = (await api.post('/v1/conversations', { agent: 'cli-agent' })).body.id;
    const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content: scripted({ text: 'for the webhook' }) });
    const [delivery] = await receiver.waitFor(1);
    expect(JSON.parse(delivery!.body)).toMatchObject({ type: 'turn.completed', data: { turnId: posted.body.turnId, agentId: agent.id, agentVersion: 2 } });
  });

  it('makes, lists, pauses, resumes and deletes a schedule, and lists its runs', async () => {
    const schedules = async (...args: string[]) => {
      const run = await runToExit('workers/cli.ts', stack.childEnv({ LOG_LEVEL: 'silent' }), ['schedules', ...args, '--url', stack.url, '--key', apiKey]);
      expect([run.code, run.stderr]).toEqual([0, '']);
      return JSON.parse(run.stdout);
    };
    const made = await schedules('create', '--content', 'good morning', '--cron', '30 7 * * 1-5', '--timezone', 'Europe/Paris', '--agent', 'cli-agent');
    expect(made).toMatchObject({ id: expect.stringMatching(/^sched_/), cron: '30 7 * * 1-5', timezone: 'Europe/Paris', enabled: true });
    expect((await schedules('list')).data).toEqual([expect.objectContaining({ id: made.id })]);
    expect(await schedules('pause', made.id)).toMatchObject({ enabled: false, nextRunAt: null });
    expect(await schedules('resume', made.id)).toMatchObject({ enabled: true, nextRunAt: expect.any(String) });
    expect((await schedules('runs', made.id)).data).toEqual([]);
    expect(await schedules('delete', made.id)).toEqual({ id: made.id, deleted: true });
  });
});
