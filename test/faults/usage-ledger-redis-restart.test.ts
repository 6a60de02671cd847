import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { faultProcesses } from '../support/fault-processes';
import { apiClient } from '../support/http';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server';
import { markedScripted } from '../support/scripted';
import { requestsWith, startTwoProviderStack, type TwoProviderStack } from '../support/two-providers';
import { TestWsClient } from '../support/ws-client';

const PRICE = { input: 2, cachedInput: 0.5, output: 8 };
const ADMIN = 'admin-token-for-ledger-restart-0123';
const LOCK_DURATION_MS = 2000;

/** Two long answers, and two tool loops whose last answer is long: all four streaming when Redis goes. */
const SCENARIOS = [
  { tokens: 800, tokenDelayMs: 10 },
  { tokens: 800, tokenDelayMs: 10 },
  {
    steps: [
      { toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] },
      { toolCalls: [{ name: 'calculator', arguments: { expression: '2+2' } }] },
      { tokens: 600, tokenDelayMs: 10 },
    ],
  },
  {
    steps: [
      { text: 'first', toolCalls: [{ name: 'calculator', arguments: { expression: '3+3' } }] },
      { tokens: 600, tokenDelayMs: 10 },
    ],
  },
];

interface LedgerLine {
  id: string;
  step: number;
  attempt: number;
  outcome: string;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cost_usd: number;
  estimated: boolean;
}

/**
 * docs/RELIABILITY.md case 47 (its Redis half): Redis goes away while turns stream and tool loops
 * run on a priced model, for longer than the workers' job locks, and comes back with its data.
 * The worker's locks are gone, so its jobs run again as new attempts and the attempts that were
 * streaming are discarded; the provider billed them all the same. Afterwards the ledger holds one
 * line per request the provider got, with the usage the provider reported for it (estimated only
 * where it reported none), and the turns' usage, the user's usage and the budget's spent figure
 * are all the ledger's sum: nothing counted twice, nothing lost.
 */
describe('Redis restarted while usage is counted (case 47)', () => {
  let redis: PrivateRedis;
  let two: TwoProviderStack;
  const processes = faultProcesses(() => two.stack);

  beforeAll(async () => {
    redis = await startPrivateRedis();
    two = await startTwoProviderStack({
      workers: 0,
      env: {
        REDIS_URL: redis.url,
        ADMIN_TOKEN: ADMIN,
        LOCK_DURATION_MS: String(LOCK_DURATION_MS),
        STALLED_INTERVAL_MS: '500',
        RECONCILE_INTERVAL_MS: '500',
      },
      models: { solo: { targets: [{ provider: 'first', model: 'scripted', price: PRICE }] } },
    });
  }, 30_000);
  afterAll(async () => {
    await processes.stopAll();
    await two.close();
    await redis.close();
  });

  it('holds each billed request once, as the provider reported it; turns, usage and budget agree with it', async () => {
    const { apiKey } = await two.stack.createUser('case-47-redis');
    const api = apiClient(two.stack.url, apiKey);
    await processes.spawn('worker');
    const turns: { turnId: string; marker: string }[] = [];
    let client: TestWsClient | undefined;
    for (const scenario of SCENARIOS) {
      const conversationId = (await api.post('/v1/conversations', { model: 'solo' })).body.id as string;
      if (!client) client = await TestWsClient.subscribed(two.stack.url, { apiKey }, conversationId);
      else {
        client.send({ type: 'subscribe', conversationId });
        await client.waitFor((frame) => frame.type === 'subscribed' && frame.conversationId === conversationId);
      }
      const marker = `c47-${randomBytes(6).toString('hex')}`;
      const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content: markedScripted(scenario, marker) });
      expect(posted.status).toBe(202);
      turns.push({ turnId: posted.body.turnId as string, marker });
    }
    const ws = client!;
    const userId = (await two.stack.resources.db.query<{ user_id: string }>('SELECT user_id FROM turns WHERE id = $1', [turns[0]!.turnId])).rows[0]!.user_id;
    const admin = apiClient(two.stack.url, ADMIN);
    expect((await admin.put(`/v1/admin/users/${userId}/budget`, { period: 'total', limitTokens: 10_000_000, onExceeded: 'reject' })).status).toBe(200);

    // Every turn is streaming its long answer (the tool loops past their tool steps).
    const streamingLongAnswer = (turnId: string) => (frame: any) =>
      frame.type === 'event' && frame.event.turnId === turnId && frame.event.type === 'text-delta' && frame.event.delta.includes('lorem');
    await Promise.all(turns.map((turn) => ws.waitFor(streamingLongAnswer(turn.turnId), 30_000)));

    // Down for longer than a lock lasts: one renewed just before the stop lapses LOCK_DURATION_MS after it.
    expect((await two.stack.resources.redis.keys(`${two.stack.config.REDIS_PREFIX}:*:lock`)).length).toBeGreaterThan(0);
    await redis.stop();
    // The event waited for is the locks' expiry, a moment on the clock.
    await sleep(LOCK_DURATION_MS + 250);
    await redis.start();

    for (const turn of turns) {
      const events = (await ws.waitForTurnEnd(turn.turnId, 60_000)).filter((event) => event.turnId === turn.turnId);
      // Each attempt after the first is a job the restart took back (once, for a job that lost its lock).
      expect([events.at(-1).type, events.at(-1).error]).toEqual(['turn-finish', undefined]);
      expect(events.filter((event) => event.type === 'turn-start').length).toBeLessThanOrEqual(2);
    }

    let ledgerTokens = 0;
    let ledgerCost = 0;
    let discarded = 0;
    for (const turn of turns) {
      const { rows: lines } = await two.stack.resources.db.query<LedgerLine>(
        `SELECT id, step, attempt, outcome, prompt_tokens, completion_tokens, total_tokens, cost_usd::float8 AS cost_usd, estimated
           FROM provider_calls WHERE turn_id = $1 ORDER BY started_at, id`,
        [turn.turnId],
      );
      const billed = requestsWith(two.first, turn.marker).map((request) => request.billed);
      // One line per request the provider got, in the order it got them, each under its own id.
      expect(lines).toHaveLength(billed.length);
      expect(new Set(lines.map((line) => line.id)).size).toBe(lines.length);
      lines.forEach((line, index) => {
        const bill = billed[index]!;
        if (bill.reported) {
          // The provider said what it billed: the ledger holds exactly that.
          expect({ estimated: line.estimated, prompt: line.prompt_tokens, completion: line.completion_tokens }).toEqual({
            estimated: false,
            prompt: bill.promptTokens,
            completion: bill.completionTokens,
          });
        } else {
          // Cut before its usage came: counted from what was sent and streamed, and marked so.
          // (The prompt is counted with the tool definitions, which the scripted model leaves out of its own count.)
          expect(line).toMatchObject({ estimated: true, outcome: 'discarded' });
          expect(line.prompt_tokens).toBeGreaterThan(0);
          // What had streamed when it was cut, by the worker's count or its in-flight marker's (o200k, which splits some words).
          expect(line.completion_tokens).toBeGreaterThan(0);
        }
        expect(line.cost_usd).toBeCloseTo((line.prompt_tokens * PRICE.input + line.completion_tokens * PRICE.output) / 1e6, 12);
      });
      discarded += lines.filter((line) => line.outcome === 'discarded').length;
      const tokens = lines.reduce((sum, line) => sum + line.total_tokens, 0);
      const cost = lines.reduce((sum, line) => sum + line.cost_usd, 0);
      const view = (await api.get(`/v1/turns/${turn.turnId}`)).body;
      expect(view.usage.totalTokens).toBe(tokens);
      expect(view.usage.costUsd).toBeCloseTo(cost, 8);
      ledgerTokens += tokens;
      ledgerCost += cost;
    }
    // The restart made the worker give up attempts it was streaming: each is in the ledger too.
    expect(discarded).toBeGreaterThan(0);

    const usage = (await api.get('/v1/usage')).body;
    expect(usage.totals.totalTokens).toBe(ledgerTokens);
    expect(usage.totals.costUsd).toBeCloseTo(ledgerCost, 8);
    const budget = (await admin.get(`/v1/admin/users/${userId}/budget`)).body;
    expect(budget.spentTokens).toBe(ledgerTokens);
    expect(budget.spentUsd).toBeCloseTo(ledgerCost, 8);
    ws.close();
  }, 120_000);
});
