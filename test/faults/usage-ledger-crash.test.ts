import { randomBytes } from 'node:crypto';
import { faultProcesses } from '../support/fault-processes';
import { apiClient } from '../support/http';
import { markedScripted } from '../support/scripted';
import { requestsWith, startTwoProviderStack, type TwoProviderStack } from '../support/two-providers';
import { TestWsClient } from '../support/ws-client';

const PRICE = { input: 2, cachedInput: 0.5, output: 8 };

/**
 * docs/RELIABILITY.md case 47 (its worker half): a worker SIGKILLed while a provider call
 * streams. The provider billed that call though its usage never arrived: it is in the ledger
 * exactly once, estimated, and the call of the attempt that took over once with its reported
 * usage; the user's usage is the ledger's sum.
 */
describe('a worker SIGKILLed mid-stream while usage is counted (case 47)', () => {
  let two: TwoProviderStack;
  const processes = faultProcesses(() => two.stack);

  beforeAll(async () => {
    two = await startTwoProviderStack({ workers: 0, models: { solo: { targets: [{ provider: 'first', model: 'scripted', price: PRICE }] } } });
  });
  afterAll(async () => {
    await processes.stopAll();
    await two.close();
  });

  it('counts the killed call once, estimated from what it streamed, and the call that took over once as reported', async () => {
    const { apiKey } = await two.stack.createUser('case-47');
    const api = apiClient(two.stack.url, apiKey);
    const worker = await processes.spawn('worker');
    const conversation = await api.post('/v1/conversations', { model: 'solo' });
    expect(conversation.status).toBe(201);
    const client = await TestWsClient.subscribed(two.stack.url, { apiKey }, conversation.body.id);
    const marker = `case-47-${randomBytes(6).toString('hex')}`;
    const posted = await api.post(`/v1/conversations/${conversation.body.id}/turns`, { content: markedScripted({ tokens: 300, tokenDelayMs: 10 }, marker) });
    const turnId = posted.body.turnId as string;
    const isDelta = (frame: any) => frame.type === 'event' && frame.event.turnId === turnId && frame.event.type === 'text-delta';
    // Deltas may arrive merged: what was shown is counted in tokens (each filler token is one word), not events.
    const tokensShown = () =>
      client
        .events()
        .filter((event) => event.type === 'text-delta' && event.turnId === turnId)
        .map((event) => event.delta)
        .join('')
        .split(/\s+/)
        .filter(Boolean).length;
    await client.waitFor((frame) => isDelta(frame) && tokensShown() >= 20);
    await worker.kill('SIGKILL');
    const shownBeforeKill = tokensShown();
    await processes.addWorker();
    const events = (await client.waitForTurnEnd(turnId, 60_000)).filter((event) => event.turnId === turnId);
    expect(events.at(-1).type).toBe('turn-finish');
    expect(events.filter((event) => event.type === 'turn-start').map((event) => event.attempt)).toEqual([1, 2]);

    const { rows: lines } = await two.stack.resources.db.query<any>(
      `SELECT id, attempt, outcome, prompt_tokens, completion_tokens, total_tokens, cost_usd::float8 AS cost_usd, estimated
         FROM provider_calls WHERE turn_id = $1 ORDER BY started_at, id`,
      [turnId],
    );
    // One line per request the provider got, each under its own id.
    expect(lines).toHaveLength(requestsWith(two.first, marker).length);
    expect(lines.map((line: any) => [line.attempt, line.outcome, line.estimated])).toEqual([
      [1, 'discarded', true],
      [2, 'ok', false],
    ]);
    const [killed, tookOver] = lines;
    expect(killed.prompt_tokens).toBeGreaterThan(0);
    // As of the in-flight marker's last write before the kill: some of what streamed, never more.
    expect(killed.completion_tokens).toBeGreaterThan(0);
    expect(killed.completion_tokens).toBeLessThanOrEqual(shownBeforeKill + 5);
    expect(killed.cost_usd).toBeCloseTo((killed.prompt_tokens * PRICE.input + killed.completion_tokens * PRICE.output) / 1e6, 12);

    const turn = (await api.get(`/v1/turns/${turnId}`)).body;
    const reported = turn.providerCalls.find((call: any) => call.id === tookOver.id).usage;
    expect([tookOver.prompt_tokens, tookOver.completion_tokens]).toEqual([reported.promptTokens, reported.completionTokens]);
    expect(turn.usage.totalTokens).toBe(killed.total_tokens + tookOver.total_tokens);

    // The user's usage is the ledger's sum, the killed call in it once.
    const usage = (await api.get('/v1/usage')).body;
    expect(usage.totals).toMatchObject({ calls: 2, totalTokens: killed.total_tokens + tookOver.total_tokens });
    expect(usage.totals.costUsd).toBeCloseTo(killed.cost_usd + tookOver.cost_usd, 8);
    client.close();
  }, 90_000);
});
