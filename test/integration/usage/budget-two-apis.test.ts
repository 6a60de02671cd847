import { randomBytes } from 'node:crypto';
import { apiClient } from '../../support/http';
import { spawnService, type ServiceProcess } from '../../support/processes';
import { markedScripted } from '../../support/scripted';
import { startTestStack, type TestStack } from '../../support/stack';
import { TestWsClient } from '../../support/ws-client';

const ADMIN = 'admin-token-for-budget-apis-0123';

/** docs/API.md, "Usage and budgets": a budget reached is refused by every API process at once. */
describe('a reached budget, two API processes', () => {
  let stack: TestStack;
  const processes: ServiceProcess[] = [];

  beforeAll(async () => {
    stack = await startTestStack({ env: { ADMIN_TOKEN: ADMIN } });
    const env = stack.childEnv({ ADMIN_TOKEN: ADMIN });
    processes.push(...(await Promise.all([spawnService('api', env), spawnService('api', env)])));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(processes.map((service) => service.kill('SIGTERM')));
    await stack.close();
  });

  it('refuses every turn posted at once through both processes, and admits none past the limit', async () => {
    const { apiKey } = await stack.createUser(`two-apis-${randomBytes(3).toString('hex')}`);
    const api = apiClient(stack.url, apiKey);
    const first = (await api.post('/v1/conversations', {})).body.id as string;
    const userId = (await stack.resources.db.query<{ user_id: string }>('SELECT user_id FROM conversations WHERE id = $1', [first])).rows[0]!.user_id;
    expect((await apiClient(stack.url, ADMIN).put(`/v1/admin/users/${userId}/budget`, { period: 'day', limitTokens: 1, onExceeded: 'reject' })).status).toBe(200);
    const client = await TestWsClient.subscribed(stack.url, { apiKey }, first);
    try {
      const spending = await api.post(`/v1/conversations/${first}/turns`, { content: markedScripted({ text: 'Past the limit.' }, `s-${randomBytes(4).toString('hex')}`) });
      expect(spending.status).toBe(202);
      await client.waitForTurnEnd(spending.body.turnId);
    } finally {
      client.close();
    }

    // Eight conversations, four posted through each process at the same moment.
    const conversations = await Promise.all(Array.from({ length: 8 }, async () => (await api.post('/v1/conversations', {})).body.id as string));
    const answers = await Promise.all(
      conversations.map((conversationId, i) => apiClient(processes[i % 2]!.url, apiKey).post(`/v1/conversations/${conversationId}/turns`, { content: `at once ${i}` })),
    );
    expect(answers.map((answer) => answer.status)).toEqual(conversations.map(() => 429));
    expect(answers.every((answer) => answer.body.error.code === 'budget_exceeded')).toBe(true);
    const { rows } = await stack.resources.db.query<{ n: number }>('SELECT count(*)::int AS n FROM turns WHERE user_id = $1', [userId]);
    expect(rows[0]!.n).toBe(1);
  });
});
