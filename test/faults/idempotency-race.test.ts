import { apiClient } from '../support/http';
import { checkInvariants } from '../support/invariants';
import { spawnService, type ServiceProcess } from '../support/processes';
import { startTestStack, type TestStack } from '../support/stack';
import { TestWsClient } from '../support/ws-client';

/**
 * docs/RELIABILITY.md case 10, the fault flavour: a client that retries hard (a timeout, a flaky
 * proxy) sends the same request many times at once, through two API processes.
 */
describe('one idempotency key posted many times at once through two API processes', () => {
  let stack: TestStack;
  let apis: ServiceProcess[];

  beforeAll(async () => {
    stack = await startTestStack();
    apis = await Promise.all([spawnService('api', stack.childEnv()), spawnService('api', stack.childEnv())]);
  }, 30_000);
  afterAll(async () => {
    await Promise.all(apis.map((service) => service.kill('SIGTERM')));
    await stack.close();
  });

  it('makes one turn per conversation, runs it once, and answers every post with it', async () => {
    const { apiKey } = await stack.createUser('retrier');
    const clients = apis.map((service) => apiClient(service.url, apiKey));
    const conversations = await Promise.all([0, 1, 2].map(async () => (await clients[0]!.post('/v1/conversations', {})).body.id as string));
    const watcher = await TestWsClient.connect(apis[1]!.url, { apiKey });
    for (const conversationId of conversations) watcher.send({ type: 'subscribe', conversationId });
    await watcher.waitFor(() => watcher.frames.filter((frame) => frame.type === 'subscribed').length === conversations.length);

    const POSTS = 16;
    const results = await Promise.all(
      conversations.map(async (conversationId, n) => {
        const body = { content: `retried ${n} [[scripted {"text":"only once ${n}"}]]`, idempotencyKey: 'client-retry' };
        const answers = await Promise.all(Array.from({ length: POSTS }, (_, i) => clients[i % 2]!.post(`/v1/conversations/${conversationId}/turns`, body)));
        return { conversationId, answers };
      }),
    );

    const turnIds: string[] = [];
    for (const { conversationId, answers } of results) {
      expect(answers.map((answer) => answer.status).sort()).toEqual([...Array(POSTS - 1).fill(200), 202]);
      const ids = new Set(answers.map((answer) => answer.body.turnId));
      expect(ids.size).toBe(1);
      const [turnId] = ids as Set<string>;
      turnIds.push(turnId!);
      const { rows } = await stack.resources.db.query<{ id: string }>('SELECT id FROM turns WHERE conversation_id = $1', [conversationId]);
      expect(rows).toEqual([{ id: turnId }]);
    }
    for (const turnId of turnIds) await watcher.waitForTurnEnd(turnId);
    for (const [n, turnId] of turnIds.entries()) {
      const starts = watcher.events().filter((event) => event.turnId === turnId && event.type === 'turn-start');
      expect(starts).toEqual([expect.objectContaining({ attempt: 1 })]);
      expect(stack.scripted.requests.filter((request) => JSON.stringify(request.body).includes(`retried ${n} `))).toHaveLength(1);
    }
    expect(Object.values(await checkInvariants(stack.resources.db, { turnIds, toolExecutions: [] }))).toEqual(['completed', 'completed', 'completed']);
    watcher.close();
  });
});
