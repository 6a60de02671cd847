import { randomBytes } from 'node:crypto';
import { apiClient } from '../../support/http';
import { poll } from '../../support/poll';
import { markedScripted } from '../../support/scripted';
import { startTestStack, type TestStack } from '../../support/stack';
import { startPricedStack } from '../../support/priced-stack';
import type { TwoProviderStack } from '../../support/two-providers';
import { WebhookReceiver } from '../../support/webhook-receiver';
import { TestWsClient } from '../../support/ws-client';

const PRICE = { input: 1000, cachedInput: 100, output: 1000 };
const ADMIN = 'admin-token-for-budget-tests-0123';
const TOOL_THEN_TEXT_SCENARIO = { steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }] }, { text: 'It is 42.' }] };

/** docs/API.md, "Usage and budgets": a user at or past a `reject` budget gets no new work. */
describe('budgets', () => {
  let two: TwoProviderStack;
  let admin: ReturnType<typeof apiClient>;
  const clients: TestWsClient[] = [];

  beforeAll(async () => {
    two = await startPricedStack({ first: PRICE, second: PRICE }, { env: { ADMIN_TOKEN: ADMIN, WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true' } });
    admin = apiClient(two.stack.url, ADMIN);
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await two.close();
  });

  async function userWithTurn() {
    const made = await two.stack.createUser(`budget-${randomBytes(3).toString('hex')}`);
    const api = apiClient(two.stack.url, made.apiKey);
    const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
    const client = await TestWsClient.subscribed(two.stack.url, { apiKey: made.apiKey }, conversationId);
    clients.push(client);
    const userId = (await two.stack.resources.db.query<any>('SELECT user_id FROM conversations WHERE id = $1', [conversationId])).rows[0].user_id as string;
    const post = (scenario: unknown = { text: 'Spending some of the budget.' }) =>
      api.post(`/v1/conversations/${conversationId}/turns`, { content: markedScripted(scenario, `b-${randomBytes(4).toString('hex')}`) });
    const runTurn = async (scenario?: unknown) => {
      const posted = await post(scenario);
      expect(posted.status).toBe(202);
      await client.waitForTurnEnd(posted.body.turnId);
      return (await api.get(`/v1/turns/${posted.body.turnId}`)).body;
    };
    const statusOf = async (turnId: string) => (await api.get(`/v1/turns/${turnId}`)).body.status as string;
    return { api, apiKey: made.apiKey, client, userId, post, runTurn, statusOf };
  }

  const TOOL_THEN_TEXT = TOOL_THEN_TEXT_SCENARIO;

  it('refuses new turns with 429 budget_exceeded and details once the spent figure reaches a reject limit, and admits again when it is raised', async () => {
    const user = await userWithTurn();
    const put = await admin.put(`/v1/admin/users/${user.userId}/budget`, { period: 'day', limitTokens: 1, onExceeded: 'reject' });
    expect(put.status).toBe(200);
    expect(put.body).toMatchObject({ period: 'day', limitTokens: 1, onExceeded: 'reject', spentTokens: 0, spentUsd: 0 });
    const turn = await user.runTurn();
    expect(turn.status).toBe('completed');

    const standing = (await admin.get(`/v1/admin/users/${user.userId}/budget`)).body;
    // The budget's figure is the ledger's sum.
    expect(standing.spentTokens).toBe(turn.usage.totalTokens);
    expect(standing.spentUsd).toBeCloseTo(turn.usage.costUsd, 8);
    expect(Date.parse(standing.resetsAt) - Date.parse(standing.periodStartsAt)).toBe(86_400_000);

    const refused = await user.post();
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'budget_exceeded', details: { limit: { tokens: 1 }, spent: turn.usage.totalTokens, resetsAt: standing.resetsAt } });
    const { rows } = await two.stack.resources.db.query<any>('SELECT count(*)::int AS n FROM turns WHERE user_id = $1', [user.userId]);
    expect(rows[0].n).toBe(1);

    await admin.put(`/v1/admin/users/${user.userId}/budget`, { period: 'day', limitTokens: 1_000_000, onExceeded: 'reject' });
    expect((await user.runTurn()).status).toBe('completed');
  });

  it('counts a USD limit and removes a budget with DELETE', async () => {
    const user = await userWithTurn();
    await admin.put(`/v1/admin/users/${user.userId}/budget`, { period: 'month', limitUsd: 0.001, onExceeded: 'reject' });
    const turn = await user.runTurn();
    expect(turn.usage.costUsd).toBeGreaterThan(0.001);
    const refused = await user.post();
    expect(refused.status).toBe(429);
    expect(refused.body.error.details.limit).toEqual({ usd: 0.001 });
    expect((await admin.request('DELETE', `/v1/admin/users/${user.userId}/budget`)).status).toBe(204);
    expect((await admin.get(`/v1/admin/users/${user.userId}/budget`)).status).toBe(404);
    expect((await user.post()).status).toBe(202);
  });

  it('refuses a budget with no limit, and one for a user that does not exist', async () => {
    const user = await userWithTurn();
    expect((await admin.put(`/v1/admin/users/${user.userId}/budget`, { period: 'day', onExceeded: 'reject' })).status).toBe(400);
    expect((await admin.put('/v1/admin/users/user_nobody/budget', { period: 'day', limitUsd: 1, onExceeded: 'reject' })).status).toBe(404);
  });

  it('fails a turn budget_exceeded after the step that reached a reject limit, that step kept', async () => {
    const user = await userWithTurn();
    await admin.put(`/v1/admin/users/${user.userId}/budget`, { period: 'total', limitTokens: 1, onExceeded: 'reject' });
    const turn = await user.runTurn(TOOL_THEN_TEXT);
    expect(turn).toMatchObject({ status: 'failed', step: 1, error: { code: 'budget_exceeded' } });
    expect(turn.steps).toHaveLength(1);
    expect(turn.providerCalls).toHaveLength(1);
    expect(turn.toolCalls).toEqual([expect.objectContaining({ toolName: 'calculator', status: 'succeeded' })]);
  });

  it('parks a turn waiting_budget after the step that reached a pause limit, holding no worker, and goes on when the budget is raised', async () => {
    const user = await userWithTurn();
    await admin.put(`/v1/admin/users/${user.userId}/budget`, { period: 'total', limitTokens: 1, onExceeded: 'pause' });
    const posted = await user.post(TOOL_THEN_TEXT);
    expect(posted.status).toBe(202);
    const turnId = posted.body.turnId as string;
    await poll('the turn never waited for its budget', async () => (await user.statusOf(turnId)) === 'waiting_budget');
    const parked = (await user.api.get(`/v1/turns/${turnId}`)).body;
    expect(parked).toMatchObject({ step: 1, steps: [expect.objectContaining({ step: 1 })] });
    expect(parked.toolCalls).toEqual([expect.objectContaining({ toolName: 'calculator', status: 'succeeded' })]);
    // No worker holds it: its job waits delayed (moved there just after the status commits), and it still
    // counts as the conversation's active turn.
    const parkedJob = (await two.stack.resources.db.query<any>('SELECT running_job FROM turns WHERE id = $1', [turnId])).rows[0].running_job as string;
    const job = await two.stack.resources.turnQueue.getJob(parkedJob);
    await poll('the parked turn kept its worker', async () => (await job!.getState()) === 'delayed');
    expect((await user.post()).status).toBe(409);

    await admin.put(`/v1/admin/users/${user.userId}/budget`, { period: 'total', limitTokens: 1_000_000, onExceeded: 'pause' });
    await user.client.waitForTurnEnd(turnId);
    const finished = (await user.api.get(`/v1/turns/${turnId}`)).body;
    expect(finished).toMatchObject({ status: 'completed', step: 2 });
    expect(finished.steps).toHaveLength(2);
    // The step before the wait is not asked again: one call per step.
    expect(finished.providerCalls).toHaveLength(2);
  });

  it('accepts a new turn past a pause limit as waiting_budget, and runs it once the budget is removed', async () => {
    const user = await userWithTurn();
    await admin.put(`/v1/admin/users/${user.userId}/budget`, { period: 'day', limitTokens: 1, onExceeded: 'pause' });
    expect((await user.runTurn()).status).toBe('completed');
    const posted = await user.post();
    expect(posted.status).toBe(202);
    const turnId = posted.body.turnId as string;
    await poll('the turn never waited for its budget', async () => (await user.statusOf(turnId)) === 'waiting_budget');
    expect((await user.api.get(`/v1/turns/${turnId}`)).body).toMatchObject({ step: 0, providerCalls: [] });
    expect((await admin.request('DELETE', `/v1/admin/users/${user.userId}/budget`)).status).toBe(204);
    await user.client.waitForTurnEnd(turnId);
    expect(await user.statusOf(turnId)).toBe('completed');
  });

  it("refuses a key past its own budget while the user's other key works, and groups usage by key", async () => {
    const user = await userWithTurn();
    const db = two.stack.resources.db;
    const firstKeyId = (await db.query<any>('SELECT id FROM api_keys WHERE user_id = $1', [user.userId])).rows[0].id as string;
    const second = await two.stack.resources.users.createApiKey(user.userId);
    const otherApi = apiClient(two.stack.url, second.apiKey);
    expect((await admin.put(`/v1/admin/keys/${firstKeyId}/budget`, { period: 'day', limitTokens: 1, onExceeded: 'reject' })).status).toBe(200);
    const spent = await user.runTurn();
    expect(spent.status).toBe('completed');

    const refused = await user.post();
    expect(refused.status).toBe(429);
    expect(refused.body.error).toMatchObject({ code: 'budget_exceeded', details: { limit: { tokens: 1 }, spent: spent.usage.totalTokens } });
    const conversationId = (await otherApi.post('/v1/conversations', {})).body.id as string;
    const other = await otherApi.post(`/v1/conversations/${conversationId}/turns`, { content: 'from the other key' });
    expect(other.status).toBe(202);
    expect((await admin.get(`/v1/admin/keys/${firstKeyId}/budget`)).body).toMatchObject({ limitTokens: 1, spentTokens: spent.usage.totalTokens });
    expect((await admin.put('/v1/admin/keys/key_nobody/budget', { period: 'day', limitTokens: 1, onExceeded: 'reject' })).status).toBe(404);

    const byKey = (await user.api.get('/v1/usage?groupBy=key')).body;
    expect(byKey.data).toEqual(expect.arrayContaining([expect.objectContaining({ group: firstKeyId, totalTokens: spent.usage.totalTokens, calls: 1 })]));
  });

  it("gives a turn's, a response's and a chat completion's cost as the ledger sums it", async () => {
    const user = await userWithTurn();
    const totalCost = async () => (await user.api.get('/v1/usage?groupBy=model')).body.totals.costUsd as number;
    const turn = await user.runTurn();
    expect(turn.usage.costUsd).toBeGreaterThan(0);
    expect(turn.usage.costUsd).toBeCloseTo(await totalCost(), 8);

    const before = await totalCost();
    const response = await user.api.post('/openai/v1/responses', { model: 'duo', input: markedScripted({ text: 'A response.' }, `resp-${randomBytes(4).toString('hex')}`) });
    expect(response.status).toBe(200);
    expect(response.body.usage.cost_usd).toBeGreaterThan(0);
    expect(response.body.usage.cost_usd).toBeCloseTo((await totalCost()) - before, 8);

    const beforeChat = await totalCost();
    const chat = await user.api.post('/openai/v1/chat/completions', {
      model: 'duo',
      messages: [{ role: 'user', content: markedScripted({ text: 'A chat.' }, `chat-${randomBytes(4).toString('hex')}`) }],
    });
    expect(chat.status).toBe(200);
    expect(chat.body.usage.cost_usd).toBeGreaterThan(0);
    expect(chat.body.usage.cost_usd).toBeCloseTo((await totalCost()) - beforeChat, 8);
    const chatTurn = (await user.api.get(`/v1/turns/${chat.body.switchyard.turnId}`)).body;
    expect(chatTurn.usage.costUsd).toBe(chat.body.usage.cost_usd);

    // The metrics count the same lines by model, with no user label.
    const metrics = await (await fetch(`${two.stack.url}/metrics`)).text();
    const cost = metrics.split('\n').filter((line) => line.startsWith('switchyard_ledger_cost_usd_total{'));
    expect(cost.some((line) => line.includes('model="first/scripted"'))).toBe(true);
    expect(metrics).toMatch(/switchyard_ledger_tokens_total\{model="first\/scripted",kind="prompt"\} [1-9]/);
    expect(cost.join('\n')).not.toContain('user');
  });

  it("gives a streamed chat completion's and a batch's cost (its results and its batch.completed webhook) as the ledger sums it", async () => {
    const user = await userWithTurn();
    const totalCost = async () => (await user.api.get('/v1/usage?groupBy=model')).body.totals.costUsd as number;

    const beforeChat = await totalCost();
    const streamed = await fetch(`${two.stack.url}/openai/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'duo',
        messages: [{ role: 'user', content: markedScripted({ text: 'A streamed chat.' }, `sc-${randomBytes(4).toString('hex')}`) }],
        stream: true,
        stream_options: { include_usage: true },
      }),
    });
    const lines = (await streamed.text()).split('\n').filter((line) => line.startsWith('data: '));
    expect(lines.at(-1)).toBe('data: [DONE]');
    const usageChunk = JSON.parse(lines.at(-2)!.slice('data: '.length));
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage.cost_usd).toBeGreaterThan(0);
    expect(usageChunk.usage.cost_usd).toBeCloseTo((await totalCost()) - beforeChat, 8);

    const hook = await WebhookReceiver.start();
    try {
      expect((await user.api.post('/v1/webhooks', { url: hook.url(), events: ['batch.completed'] })).status).toBe(201);
      const beforeBatch = await totalCost();
      const submitted = await user.api.post('/v1/batches', { items: [{ messages: [markedScripted(TOOL_THEN_TEXT, `bt-${randomBytes(4).toString('hex')}`)] }] });
      expect(submitted.status).toBe(202);
      const [webhook] = await hook.waitFor(1);
      const spent = (await totalCost()) - beforeBatch;
      expect(spent).toBeGreaterThan(0);
      expect(webhook!.json).toMatchObject({ type: 'batch.completed', data: { batchId: submitted.body.batchId } });
      expect(webhook!.json.data.usage.costUsd).toBeCloseTo(spent, 8);
      const batch = (await user.api.get(`/v1/batches/${submitted.body.batchId}`)).body;
      expect(batch.usage.costUsd).toBeCloseTo(spent, 8);
      const result = (await user.api.get(`/v1/batches/${submitted.body.batchId}/results`)).body;
      expect(result.usage.costUsd).toBeCloseTo(spent, 8);
      expect(result.usage.totalTokens).toBe(batch.usage.totalTokens);
    } finally {
      await hook.close();
    }
  });

  it('is overshot by at most one step per turn running when it is reached: measured with four turns at once', async () => {
    const user = await userWithTurn();
    const limitTokens = 1;
    await admin.put(`/v1/admin/users/${user.userId}/budget`, { period: 'day', limitTokens, onExceeded: 'reject' });
    // Four conversations whose first steps stream side by side (each a tool call, then text).
    const slowTool = { steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }], tokenDelayMs: 50 }, { text: 'It is 42.' }] };
    const running = await Promise.all(
      Array.from({ length: 4 }, async () => {
        const conversationId = (await user.api.post('/v1/conversations', {})).body.id as string;
        const client = await TestWsClient.subscribed(two.stack.url, { apiKey: user.apiKey }, conversationId);
        clients.push(client);
        return { conversationId, client };
      }),
    );
    const posted = await Promise.all(
      running.map(({ conversationId }) => user.api.post(`/v1/conversations/${conversationId}/turns`, { content: markedScripted(slowTool, `o-${randomBytes(4).toString('hex')}`) })),
    );
    expect(posted.map((answer) => answer.status)).toEqual([202, 202, 202, 202]);
    await Promise.all(posted.map((answer, i) => running[i]!.client.waitForTurnEnd(answer.body.turnId)));

    const { rows } = await two.stack.resources.db.query<{ turn_id: string; steps: number; tokens: number }>(
      `SELECT turn_id, count(*)::int AS steps, SUM(total_tokens)::int AS tokens FROM provider_calls WHERE user_id = $1 GROUP BY turn_id`,
      [user.userId],
    );
    // No turn took its second step: each stopped after the step that was running when the limit
    // was reached (a turn whose first step started only after it was reached took none).
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((row) => row.steps === 1)).toBe(true);
    const turns = await Promise.all(posted.map(async (answer) => (await user.api.get(`/v1/turns/${answer.body.turnId}`)).body));
    expect(turns.map((turn) => turn.error?.code)).toEqual(['budget_exceeded', 'budget_exceeded', 'budget_exceeded', 'budget_exceeded']);
    const spent = (await admin.get(`/v1/admin/users/${user.userId}/budget`)).body.spentTokens as number;
    expect(spent).toBe(rows.reduce((total, row) => total + row.tokens, 0));
    // The bound of the guide: the turns running when it was reached × one step each.
    expect(spent - limitTokens).toBeLessThanOrEqual(rows.length * Math.max(...rows.map((row) => row.tokens)));
  });

  it('tells of a budget reached with one budget.exceeded webhook per period, whoever finds it reached', async () => {
    const user = await userWithTurn();
    const hook = await WebhookReceiver.start();
    try {
      expect((await user.api.post('/v1/webhooks', { url: hook.url(), events: ['budget.exceeded'] })).status).toBe(201);
      await admin.put(`/v1/admin/users/${user.userId}/budget`, { period: 'day', limitTokens: 1, onExceeded: 'reject' });
      const turn = await user.runTurn();
      expect((await user.post()).status).toBe(429);
      expect((await user.post()).status).toBe(429);
      const [webhook] = await hook.waitFor(1);
      expect(webhook!.json).toMatchObject({ type: 'budget.exceeded', data: { userId: user.userId, period: 'day', limit: { tokens: 1 }, spent: turn.usage.totalTokens } });
      const { rows } = await two.stack.resources.db.query<any>(
        `SELECT count(*)::int AS n FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id WHERE e.user_id = $1 AND d.type = 'budget.exceeded'`,
        [user.userId],
      );
      expect(rows[0].n).toBe(1);
    } finally {
      await hook.close();
    }
  });
});

/** A `pause` budget's period that resets wakes its turns by itself: the workers' clock is the test's. */
describe('a pause budget at its period reset', () => {
  let stack: TestStack;
  let offsetMs = 0;

  beforeAll(async () => {
    stack = await startTestStack({ env: { ADMIN_TOKEN: ADMIN }, now: () => new Date(Date.now() + offsetMs) });
  });
  afterAll(async () => {
    await stack.close();
  });

  it('resumes a turn parked by a day budget when the day ends', async () => {
    const made = await stack.createUser(`budget-reset-${randomBytes(3).toString('hex')}`);
    const api = apiClient(stack.url, made.apiKey);
    const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
    const userId = (await stack.resources.db.query<any>('SELECT user_id FROM conversations WHERE id = $1', [conversationId])).rows[0].user_id as string;
    const client = await TestWsClient.subscribed(stack.url, { apiKey: made.apiKey }, conversationId);
    try {
      await apiClient(stack.url, ADMIN).put(`/v1/admin/users/${userId}/budget`, { period: 'day', limitTokens: 1, onExceeded: 'pause' });
      // The workers' day ends three seconds from now.
      const midnight = new Date(new Date().setUTCHours(24, 0, 0, 0));
      offsetMs = midnight.getTime() - Date.now() - 3000;
      const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content: markedScripted(TOOL_THEN_TEXT_SCENARIO, `r-${randomBytes(4).toString('hex')}`) });
      const turnId = posted.body.turnId as string;
      await poll('the turn never waited for its budget', async () => (await api.get(`/v1/turns/${turnId}`)).body.status === 'waiting_budget');
      expect((await api.get(`/v1/turns/${turnId}`)).body.step).toBe(1);
      // The next day, on the workers' clock: its job wakes at the reset it was parked for.
      offsetMs += 5000;
      await client.waitForTurnEnd(turnId, 20_000);
      expect((await api.get(`/v1/turns/${turnId}`)).body).toMatchObject({ status: 'completed', step: 2 });
    } finally {
      client.close();
      offsetMs = 0;
    }
  });
});
