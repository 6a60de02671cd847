import { randomBytes } from 'node:crypto';
import { apiClient } from '../../support/http';
import { markedScripted } from '../../support/scripted';
import { startPricedStack } from '../../support/priced-stack';
import type { TwoProviderStack } from '../../support/two-providers';
import { TestWsClient } from '../../support/ws-client';

const PRICE = { input: 3, cachedInput: 0.3, output: 15 };
const ADMIN = 'admin-token-for-usage-tests-0123';

/** docs/API.md, "Usage and budgets": one ledger line per provider call, priced from the models file. */
describe('the usage ledger', () => {
  let two: TwoProviderStack;
  let api: ReturnType<typeof apiClient>;
  let apiKey: string;
  const clients: TestWsClient[] = [];

  beforeAll(async () => {
    // duo's first target priced, its second not.
    two = await startPricedStack({ first: PRICE }, { env: { PROVIDER_RETRY_BASE_MS: '20', PROVIDER_COOLDOWN_BASE_MS: '1000', ADMIN_TOKEN: ADMIN } });
    apiKey = (await two.stack.createUser('ledger')).apiKey;
    api = apiClient(two.stack.url, apiKey);
  });
  afterEach(async () => {
    two.first.setFault(null);
    await two.healTargets();
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await two.close();
  });

  async function runTurn(scenario: unknown, conversation: Record<string, unknown> = {}) {
    const conversationId = (await api.post('/v1/conversations', conversation)).body.id as string;
    const client = await TestWsClient.subscribed(two.stack.url, { apiKey }, conversationId);
    clients.push(client);
    const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content: markedScripted(scenario, `run-${randomBytes(6).toString('hex')}`) });
    expect(posted.status).toBe(202);
    await client.waitForTurnEnd(posted.body.turnId);
    return { turnId: posted.body.turnId as string, conversationId, turn: (await api.get(`/v1/turns/${posted.body.turnId}`)).body };
  }

  async function ledgerOf(turnId: string) {
    const { rows } = await two.stack.resources.db.query<any>(
      `SELECT id, provider, outcome, prompt_tokens, cached_prompt_tokens, completion_tokens, reasoning_tokens, total_tokens, cost_usd::float8 AS cost_usd, priced, estimated
         FROM provider_calls WHERE turn_id = $1 ORDER BY started_at, id`,
      [turnId],
    );
    return rows;
  }

  it('counts every call of a tool loop once, priced from the models file, equal to the usage the provider reported', async () => {
    const run = await runTurn({ steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }] }, { text: 'It is 42.' }] });
    expect(run.turn.status).toBe('completed');
    const lines = await ledgerOf(run.turnId);
    expect(lines).toHaveLength(2);
    for (const [index, line] of lines.entries()) {
      const reported = run.turn.providerCalls[index].usage;
      expect(line).toMatchObject({ provider: 'first', outcome: 'ok', estimated: false, priced: true });
      expect([line.prompt_tokens, line.completion_tokens, line.total_tokens]).toEqual([reported.promptTokens, reported.completionTokens, reported.totalTokens]);
      expect(line.cost_usd).toBeCloseTo((reported.promptTokens * PRICE.input + reported.completionTokens * PRICE.output) / 1e6, 12);
    }
    const sum = (key: string) => lines.reduce((total: number, line: any) => total + line[key], 0);
    expect(sum('prompt_tokens')).toBe(run.turn.usage.promptTokens);
    expect(sum('completion_tokens')).toBe(run.turn.usage.completionTokens);
  });

  it('counts a call cut mid-stream, estimated from what was sent and streamed, and the unpriced call that took over at cost 0', async () => {
    two.first.setFault({ cutAfterTokens: 3 });
    const run = await runTurn({ text: 'The second provider answers the whole text, once, whatever the first did.' });
    expect(run.turn.status).toBe('completed');
    const [cut, ok, ...rest] = await ledgerOf(run.turnId);
    expect(rest).toEqual([]);
    expect(cut).toMatchObject({ provider: 'first', outcome: 'discarded', estimated: true, priced: true });
    expect(cut.prompt_tokens).toBeGreaterThan(0);
    expect(cut.completion_tokens).toBeGreaterThan(0);
    expect(cut.cost_usd).toBeGreaterThan(0);
    expect(ok).toMatchObject({ provider: 'second', outcome: 'ok', estimated: false, priced: false, cost_usd: 0 });
  });

  it('counts a call refused before any output as nothing billed', async () => {
    two.first.setFault({ refuse: { status: 503 } });
    const run = await runTurn({ text: 'fine' });
    const [refused] = await ledgerOf(run.turnId);
    expect(refused).toMatchObject({ provider: 'first', outcome: 'failed', estimated: false, prompt_tokens: 0, completion_tokens: 0, cost_usd: 0 });
  });

  it("shows a turn's usage as the ledger's sum with its cost, and sums the user's by day, model and conversation", async () => {
    two.first.setFault({ cutAfterTokens: 3, times: 1 });
    const { apiKey: otherKey } = await two.stack.createUser('ledger-other');
    const from = new Date().toISOString();
    const run = await runTurn({ text: 'Counted once, the discarded attempt too.' });
    const lines = await ledgerOf(run.turnId);
    expect(lines.map((line: any) => line.outcome)).toEqual(['discarded', 'ok']);
    const sum = (key: string) => lines.reduce((total: number, line: any) => total + line[key], 0);
    expect(run.turn.usage).toMatchObject({ promptTokens: sum('prompt_tokens'), completionTokens: sum('completion_tokens'), totalTokens: sum('total_tokens') });
    expect(run.turn.usage.costUsd).toBeCloseTo(sum('cost_usd'), 8);
    expect(run.turn.usage.costUsd).toBeGreaterThan(0);
    expect(run.turn.providerCalls.map((call: any) => call.estimated)).toEqual([true, false]);

    const byConversation = await api.get(`/v1/usage?groupBy=conversation&from=${encodeURIComponent(from)}`);
    expect(byConversation.status).toBe(200);
    expect(byConversation.body.data).toEqual([expect.objectContaining({ group: run.conversationId, calls: 2, totalTokens: sum('total_tokens') })]);
    expect(byConversation.body.totals).toMatchObject({ calls: 2, totalTokens: sum('total_tokens'), promptTokens: sum('prompt_tokens') });
    expect(byConversation.body.totals.costUsd).toBeCloseTo(sum('cost_usd'), 8);

    const byModel = await api.get(`/v1/usage?groupBy=model&from=${encodeURIComponent(from)}`);
    expect(byModel.body.data.map((row: any) => [row.group, row.calls])).toEqual([
      ['first/scripted', 1],
      ['second/scripted', 1],
    ]);
    const byDay = await api.get('/v1/usage');
    expect(byDay.body.data.at(-1).group).toBe(new Date().toISOString().slice(0, 10));
    // Another user sees none of it; the admin sees it under the user's id.
    expect((await apiClient(two.stack.url, otherKey).get('/v1/usage')).body.totals.calls).toBe(0);
    const userId = run.turn.userId ?? (await two.stack.resources.db.query<any>('SELECT user_id FROM turns WHERE id = $1', [run.turnId])).rows[0].user_id;
    const admin = await apiClient(two.stack.url, ADMIN).get(`/v1/admin/usage?userId=${userId}&groupBy=conversation&from=${encodeURIComponent(from)}`);
    expect(admin.status).toBe(200);
    expect(admin.body.totals).toEqual(byConversation.body.totals);
    expect((await api.get('/v1/usage?groupBy=colour')).status).toBe(400);
  });

  it('sums the usage by agent, for the user and the admin, a turn on no agent under null', async () => {
    const from = new Date().toISOString();
    const agent = (await api.post('/v1/agents', { name: `ledger-${randomBytes(4).toString('hex')}`, instructions: 'Counted by agent.' })).body;
    expect(agent.id).toMatch(/^agent_/);
    const onAgent = await runTurn({ text: 'On the agent.' }, { agent: agent.id });
    const onNone = await runTurn({ text: 'On no agent.' });
    const tokens = async (turnId: string) => (await ledgerOf(turnId)).reduce((total: number, line: any) => total + line.total_tokens, 0);

    const byAgent = await api.get(`/v1/usage?groupBy=agent&from=${encodeURIComponent(from)}`);
    expect(byAgent.status).toBe(200);
    expect(byAgent.body.data).toEqual([
      expect.objectContaining({ group: agent.id, calls: 1, totalTokens: await tokens(onAgent.turnId) }),
      expect.objectContaining({ group: null, calls: 1, totalTokens: await tokens(onNone.turnId) }),
    ]);
    const userId = (await two.stack.resources.db.query<any>('SELECT user_id FROM turns WHERE id = $1', [onAgent.turnId])).rows[0].user_id;
    const admin = await apiClient(two.stack.url, ADMIN).get(`/v1/admin/usage?userId=${userId}&groupBy=agent&from=${encodeURIComponent(from)}`);
    expect(admin.status).toBe(200);
    expect(admin.body.data).toEqual(byAgent.body.data);
  });
});
