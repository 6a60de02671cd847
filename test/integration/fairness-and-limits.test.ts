import { startApi, type RunningApi } from '../../src/runtime/start-api';
import { apiClient } from '../support/http';
import { followBatchEvents } from '../support/batch-events';
import { checkInvariants } from '../support/invariants';
import { startTestStack, type TestStack } from '../support/stack';
import { startToolHttpServer, writeToolsDir, type ToolHttpServer } from '../support/tool-servers';
import { scripted } from '../support/tool-turns';
import { TestWsClient } from '../support/ws-client';

/** Runs `task` over `items` with at most `width` at once. */
async function inParallel<T, R>(items: T[], width: number, task: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) {
        const index = next++;
        results[index] = await task(items[index]!);
      }
    }),
  );
  return results;
}

/**
 * API.md Guarantees, last item: one user's backlog does not starve another user, and per-user
 * limits (request rate, active turns) and per-turn caps (tool calls per step, maxSteps) hold.
 */
describe('fairness and limits', () => {
  const clients: TestWsClient[] = [];
  afterAll(() => {
    for (const client of clients) client.close();
  });
  const watch = async (baseUrl: string, apiKey: string, conversationId: string) => {
    const client = await TestWsClient.subscribed(baseUrl, { apiKey }, conversationId);
    clients.push(client);
    return client;
  };

  describe('fairness between users', () => {
    const BACKLOG = 1000;
    const CONCURRENCY = 4;
    let stack: TestStack;

    beforeAll(async () => {
      // No worker yet: the backlog is queued in full before anything runs.
      stack = await startTestStack({
        workers: 0,
        env: { WORKER_CONCURRENCY: String(CONCURRENCY), RATE_LIMIT_PER_MINUTE: '100000', MAX_ACTIVE_TURNS_PER_USER: String(BACKLOG) },
      });
    });
    afterAll(() => stack.close());

    it("runs one user's single turn after a few of another user's thousand queued turns, not after all of them", async () => {
      const alice = await stack.createUser('alice');
      const bob = await stack.createUser('bob');
      const aliceApi = apiClient(stack.url, alice.apiKey);
      const bobApi = apiClient(stack.url, bob.apiKey);
      const conversations = await inParallel(
        Array.from({ length: BACKLOG }, (_, i) => i),
        16,
        async () => (await stack.resources.conversations.create({ userId: alice.id })).id,
      );
      const aliceTurns = await inParallel(conversations, 48, async (conversationId) => {
        const posted = await aliceApi.post(`/v1/conversations/${conversationId}/turns`, { content: `quick ${scripted({ text: 'ok' })}` });
        expect(posted.status).toBe(202);
        return posted.body.turnId as string;
      });

      // Alice's backlog is under way...
      const early = await watch(stack.url, alice.apiKey, conversations[9]!);
      await stack.addWorker();
      await early.waitForTurnEnd(aliceTurns[9]!);
      // ...when Bob asks for one answer.
      const bobConversation = (await bobApi.post('/v1/conversations', {})).body.id as string;
      const bobClient = await watch(stack.url, bob.apiKey, bobConversation);
      const posted = await bobApi.post(`/v1/conversations/${bobConversation}/turns`, { content: `just one ${scripted({ text: 'ok' })}` });
      expect(posted.status).toBe(202);
      const events = await bobClient.waitForTurnEnd(posted.body.turnId);
      expect(events.at(-1)).toMatchObject({ type: 'turn-finish' });

      const { rows } = await stack.resources.db.query<{ during: string; after: string; unfinished: string }>(
        `SELECT count(*) FILTER (WHERE a.finished_at > b.created_at AND a.finished_at <= b.finished_at) AS during,
                count(*) FILTER (WHERE a.finished_at > b.finished_at) AS after,
                count(*) FILTER (WHERE a.finished_at IS NULL) AS unfinished
           FROM turns a, turns b WHERE a.user_id = $1 AND b.id = $2`,
        [alice.id, posted.body.turnId],
      );
      const counts = { during: Number(rows[0]!.during), unfinished: Number(rows[0]!.unfinished) + Number(rows[0]!.after) };
      // A few turns' worth (those already running, and those the other slots finished while
      // Bob's ran), with most of Alice's backlog still waiting behind him.
      expect(counts.during).toBeLessThanOrEqual(6 * CONCURRENCY);
      expect(counts.unfinished).toBeGreaterThan(BACKLOG / 2);
      await checkInvariants(stack.resources.db, { turnIds: [posted.body.turnId, aliceTurns[9]!], toolExecutions: [] });
    }, 120_000); // a thousand conversations and turns posted first: most of the time is that, not the check
  });

  describe('per-user limits and per-turn caps', () => {
    const PER_MINUTE = 30;
    let stack: TestStack;
    let tools: ToolHttpServer;
    let secondApi: RunningApi;

    beforeAll(async () => {
      tools = await startToolHttpServer();
      tools.route('/count', (request) => ({ body: { counted: request.body } }));
      const toolsDir = await writeToolsDir({
        'count.json': { name: 'count', description: 'Counts', url: `${tools.url}/count`, retries: 0, fields: [{ name: 'n', type: 'integer', required: true }] },
      });
      stack = await startTestStack({
        env: { TOOLS_DIR: toolsDir, RATE_LIMIT_PER_MINUTE: String(PER_MINUTE), MAX_ACTIVE_TURNS_PER_USER: '2', MAX_TOOL_CALLS_PER_STEP: '2' },
      });
      // A second API process on the same Redis and database: the limits are per user, not per process.
      secondApi = await startApi(stack.resources);
    });
    afterAll(async () => {
      await secondApi.close();
      await stack.close();
      await tools.close();
    });

    it('answers 429 rate_limited with Retry-After past RATE_LIMIT_PER_MINUTE, counted across API processes, for that user only', async () => {
      const { apiKey } = await stack.createUser('eager');
      const first = apiClient(stack.url, apiKey);
      const second = apiClient(secondApi.url, apiKey);
      for (let i = 0; i < PER_MINUTE; i++) expect((await (i % 2 ? second : first).get('/v1/conversations')).status).toBe(200);
      for (const api of [first, second]) {
        const refused = await api.get('/v1/conversations');
        expect([refused.status, refused.body.error.code]).toEqual([429, 'rate_limited']);
        const retryAfter = Number(refused.headers.get('retry-after'));
        expect(retryAfter).toBeGreaterThanOrEqual(1);
        expect(retryAfter).toBeLessThanOrEqual(60);
      }
      // Writes are counted and refused alike; another user is untouched.
      expect((await first.post('/v1/conversations', {})).status).toBe(429);
      const { apiKey: otherKey } = await stack.createUser('patient');
      expect((await apiClient(secondApi.url, otherKey).get('/v1/conversations')).status).toBe(200);
    });

    it('answers 429 past MAX_ACTIVE_TURNS_PER_USER, counting queued turns, and accepts again once one ends', async () => {
      const { apiKey } = await stack.createUser('busy');
      const api = apiClient(stack.url, apiKey);
      const [first, second, third] = (await Promise.all([0, 1, 2].map(async () => (await api.post('/v1/conversations', {})).body.id))) as [string, string, string];
      const slow = { content: `wait ${scripted({ text: 'late', firstTokenDelayMs: 60_000 })}` };
      const running = await api.post(`/v1/conversations/${first}/turns`, slow);
      expect(running.status).toBe(202);
      // Queued behind the running one on the same conversation: active too.
      const queued = await api.post(`/v1/conversations/${first}/turns`, { ...slow, onBusy: 'enqueue' });
      expect([queued.status, queued.body.status]).toEqual([202, 'queued']);
      const refused = await api.post(`/v1/conversations/${second}/turns`, slow);
      expect([refused.status, refused.body.error.code]).toEqual([429, 'rate_limited']);
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      // Nothing was recorded for the refused turn.
      expect((await api.get(`/v1/conversations/${second}`)).body.messages).toEqual([]);

      // Another user is not limited by this one's turns.
      const { apiKey: otherKey } = await stack.createUser('calm');
      const other = apiClient(stack.url, otherKey);
      const otherConversation = (await other.post('/v1/conversations', {})).body.id;
      const otherTurn = await other.post(`/v1/conversations/${otherConversation}/turns`, { content: `hi ${scripted({ text: 'hello' })}` });
      expect(otherTurn.status).toBe(202);

      expect((await api.post(`/v1/turns/${queued.body.turnId}/cancel`)).body.status).toBe('cancelled');
      const accepted = await api.post(`/v1/conversations/${third}/turns`, { content: `now ${scripted({ text: 'fine' })}` });
      expect(accepted.status).toBe(202);
      const client = await watch(stack.url, apiKey, third);
      expect((await client.waitForTurnEnd(accepted.body.turnId)).at(-1)).toMatchObject({ type: 'turn-finish' });
      expect((await api.post(`/v1/turns/${running.body.turnId}/cancel`)).body.status).toBe('cancelled');

      const otherClient = await watch(stack.url, otherKey, otherConversation);
      await otherClient.waitForTurnEnd(otherTurn.body.turnId);
      const statuses = await checkInvariants(stack.resources.db, {
        turnIds: [running.body.turnId, queued.body.turnId, accepted.body.turnId, otherTurn.body.turnId],
        toolExecutions: [],
      });
      expect(Object.values(statuses)).toEqual(['cancelled', 'cancelled', 'completed', 'completed']);
    });

    it('runs at most MAX_TOOL_CALLS_PER_STEP calls of a step (the rest get too_many_tool_calls), and stops at maxSteps', async () => {
      const { apiKey } = await stack.createUser('fan-out');
      const api = apiClient(stack.url, apiKey);
      const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
      const client = await watch(stack.url, apiKey, conversationId);
      const calls = (step: number) => [1, 2, 3, 4].map((n) => ({ name: 'count', arguments: { n: step * 10 + n } }));
      const posted = await api.post(`/v1/conversations/${conversationId}/turns`, {
        content: `fan-out-marker ${scripted({ steps: [{ toolCalls: calls(1) }, { toolCalls: calls(2) }, { text: 'never reached' }] })}`,
        maxSteps: 2,
      });
      expect(posted.status).toBe(202);
      const turnId = posted.body.turnId as string;
      const events = (await client.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);

      expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'max_steps' });
      // Only the first two calls of step 1 ran; step 2's calls never ran (the turn was over).
      expect(tools.requests.map((request) => (request.body as { n: number }).n)).toEqual(expect.arrayContaining([11, 12]));
      expect(tools.requests).toHaveLength(2);
      const results = events.filter((event) => event.type === 'tool-result');
      const summary = results.map((event) => [event.result?.counted?.n ?? null, event.error?.code ?? null, event.attempts]);
      expect(summary).toHaveLength(4);
      expect(summary).toEqual(
        expect.arrayContaining([
          [11, null, 1],
          [12, null, 1],
          [null, 'too_many_tool_calls', 0],
        ]),
      );
      expect(summary.filter(([, code]) => code === 'too_many_tool_calls')).toHaveLength(2);
      // The model heard about every call: the follow-up carries four tool messages, two refusals.
      const requests = stack.scripted.requests.filter((request) => JSON.stringify(request.body).includes('fan-out-marker'));
      expect(requests).toHaveLength(2);
      const toolMessages = (requests[1]!.body as { messages: { role: string; content: string }[] }).messages.filter((message) => message.role === 'tool');
      expect(toolMessages).toHaveLength(4);
      expect(toolMessages.filter((message) => message.content.includes('too_many_tool_calls'))).toHaveLength(2);
      const statuses = await checkInvariants(stack.resources.db, { turnIds: [turnId], toolExecutions: tools.executions(), events });
      expect(statuses[turnId]).toBe('completed');
    });
  });

  describe("a batch within its user's limits", () => {
    const LIMIT = 5;
    let stack: TestStack;

    beforeAll(async () => {
      // No repair pass during the test: the batch must go on by itself, not wait for one.
      stack = await startTestStack({ env: { MAX_ACTIVE_TURNS_PER_USER: String(LIMIT), WORKER_CONCURRENCY: '8', RECONCILE_INTERVAL_MS: '600000' } });
    });
    afterAll(() => stack.close());

    it('runs a batch of concurrency 20 with at most MAX_ACTIVE_TURNS_PER_USER turns of its user at once, and completes', async () => {
      const user = await stack.createUser('batch-limited');
      const api = apiClient(stack.url, user.apiKey);
      const items = Array.from({ length: 40 }, (_, i) => ({
        customId: `l${i}`,
        messages:
          i % 8 === 0
            ? [scripted({ text: `first ${i}` }), scripted({ text: `second ${i}`, tokens: 10, tokenDelayMs: 5 })]
            : [scripted({ text: `answer ${i}`, tokens: 10, tokenDelayMs: 5 })],
      }));
      const created = await api.post('/v1/batches', { items, concurrency: 20 });
      expect(created.status).toBe(202);
      const progress = await followBatchEvents(stack.url, user.apiKey, created.body.id);
      const end = await progress.finished(90_000).finally(() => progress.close());
      expect(end).toMatchObject({ status: 'completed', counts: { total: 40, succeeded: 40, failed: 0 } });

      // Every turn of the user, from when it was queued until it ended: never more than the limit at once.
      const { rows } = await stack.resources.db.query<{ id: string; created_at: Date; finished_at: Date }>('SELECT id, created_at, finished_at FROM turns WHERE user_id = $1', [
        user.id,
      ]);
      expect(rows).toHaveLength(45);
      const moments = rows
        .flatMap(
          (row) =>
            [
              [row.created_at.getTime(), 1],
              [row.finished_at.getTime(), -1],
            ] as [number, number][],
        )
        .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
      let open = 0;
      let most = 0;
      for (const [, change] of moments) most = Math.max(most, (open += change));
      expect(most).toBeLessThanOrEqual(LIMIT);
      expect(most).toBeGreaterThan(1);
      const statuses = await checkInvariants(stack.resources.db, { turnIds: rows.map((row) => row.id), toolExecutions: [] });
      expect(new Set(Object.values(statuses))).toEqual(new Set(['completed']));
    }, 120_000);

    it("starts a batch whose user's slots are all taken once interactive turns free them", async () => {
      const user = await stack.createUser('batch-behind-interactive');
      const api = apiClient(stack.url, user.apiKey);
      const slow = { content: `hold ${scripted({ text: 'late', firstTokenDelayMs: 60_000 })}` };
      const holding: string[] = [];
      for (let i = 0; i < LIMIT; i++) {
        const conversation = (await api.post('/v1/conversations', {})).body.id;
        const posted = await api.post(`/v1/conversations/${conversation}/turns`, slow);
        expect(posted.status).toBe(202);
        holding.push(posted.body.turnId);
      }
      const items = Array.from({ length: 12 }, (_, i) => ({ customId: `w${i}`, messages: [scripted({ text: `answer ${i}` })] }));
      const batch = (await api.post('/v1/batches', { items, concurrency: 20 })).body;
      const progress = await followBatchEvents(stack.url, user.apiKey, batch.id);
      // Nothing of it starts while the user has no free slot.
      expect((await progress.waitFor((frame) => frame.type === 'batch-progress')).counts).toMatchObject({ queued: 12, running: 0 });
      for (const turnId of holding) expect((await api.post(`/v1/turns/${turnId}/cancel`)).body.status).toBe('cancelled');
      const end = await progress.finished(90_000).finally(() => progress.close());
      expect(end).toMatchObject({ status: 'completed', counts: { total: 12, succeeded: 12 } });
      const { rows } = await stack.resources.db.query<{ id: string }>(
        'SELECT t.id FROM turns t JOIN batch_items b ON b.conversation_id = t.conversation_id WHERE b.batch_id = $1',
        [batch.id],
      );
      expect(rows).toHaveLength(12);
      await checkInvariants(stack.resources.db, { turnIds: [...holding, ...rows.map((row) => row.id)], toolExecutions: [] });
    }, 120_000);
  });
});
