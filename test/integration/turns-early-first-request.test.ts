import type { Transaction } from '../../src/store/db';
import { apiClient } from '../support/http';
import { waitForNoJobLeft } from '../support/job-counts';
import { waitUntilStatementWaitsForLock } from '../support/lock-waits';
import { poll } from '../support/poll';
import { markedScripted } from '../support/scripted';
import { startTestStack, type TestStack } from '../support/stack';
import { TestWsClient } from '../support/ws-client';

/**
 * EARLY_FIRST_REQUEST: a new turn's first request goes out while the turn is taken, and its
 * answer is shown only once the take holds. Each test holds the turn's row lock so that the take
 * waits, sees the request reach the model meanwhile, then changes what the take will find.
 */
describe('the early first request', () => {
  let stack: TestStack;
  let api: ReturnType<typeof apiClient>;
  let apiKey: string;
  const clients: TestWsClient[] = [];

  beforeAll(async () => {
    stack = await startTestStack({ workers: 0, env: { EARLY_FIRST_REQUEST: 'true' } });
    apiKey = (await stack.createUser('early')).apiKey;
    api = apiClient(stack.url, apiKey);
  });
  // Each test starts its worker once the turn's row is held.
  afterEach(async () => {
    for (const worker of [...stack.workers]) await stack.stopWorker(worker);
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await stack.close();
  });

  /** Posts a turn with no worker running, then holds its row while a worker starts and takes its job; `change` runs in the holding transaction. */
  async function postWhileTakeWaits(text: string, change: (tx: Transaction, turnId: string) => Promise<void>) {
    const conversationId = (await api.post('/v1/conversations', { system: 'first system' })).body.id as string;
    const client = await TestWsClient.subscribed(stack.url, { apiKey }, conversationId);
    clients.push(client);
    const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content: markedScripted({ text }) });
    expect(posted.status).toBe(202);
    const turnId = posted.body.turnId as string;
    const requestsBefore = stack.scripted.requests.length;
    let locked!: () => void;
    const lockHeld = new Promise<void>((resolve) => (locked = resolve));
    let proceed!: () => void;
    const proceeding = new Promise<void>((resolve) => (proceed = resolve));
    const holder = stack.resources.db.transaction(async (tx) => {
      await tx.query('SELECT 1 FROM turns WHERE id = $1 FOR UPDATE', [turnId]);
      locked();
      await proceeding;
      await change(tx, turnId);
    });
    await lockHeld;
    await stack.addWorker();
    await waitUntilStatementWaitsForLock(stack.resources.db, 'WITH target AS');
    // The request is out while the take still waits for the row.
    await poll('the first request did not reach the model while the take waited', () => stack.scripted.requests.length > requestsBefore);
    expect(stack.scripted.requests.length).toBe(requestsBefore + 1);
    proceed();
    await holder;
    return { turnId, conversationId, client, requestsBefore };
  }

  async function ledgerOf(turnId: string) {
    const { rows } = await stack.resources.db.query<{ outcome: string; attempt: number; error: { code: string } | null; total_tokens: number }>(
      'SELECT outcome, attempt, error, total_tokens FROM provider_calls WHERE turn_id = $1 ORDER BY started_at, id',
      [turnId],
    );
    return rows;
  }

  it('is aborted when another job takes the turn first, counted once in the ledger and shown to nobody', async () => {
    const { turnId, client, requestsBefore } = await postWhileTakeWaits('never shown', async (tx, id) => {
      // As if another worker's job had taken the turn meanwhile: this job's take finds it running under that job.
      await tx.query("UPDATE turns SET status = 'running', attempt = attempt + 1, running_job = 'another-job', started_at = clock_timestamp() WHERE id = $1", [id]);
    });
    await poll('the aborted early request was not recorded', async () => (await ledgerOf(turnId)).length > 0);
    await waitForNoJobLeft(stack.resources.turnQueue);
    expect(await ledgerOf(turnId)).toEqual([{ outcome: 'failed', attempt: 1, error: expect.objectContaining({ code: 'aborted' }), total_tokens: 0 }]);
    expect(stack.scripted.requests.length).toBe(requestsBefore + 1);
    const shown = client.events().filter((event) => event.turnId === turnId);
    expect(shown.map((event) => event.type)).toEqual([]);
  });

  it('is sent again after the take when the turn changed between the read and the take; the answer is shown once', async () => {
    const text = 'The answer comes from the second request, after the take.';
    const { turnId, client, requestsBefore } = await postWhileTakeWaits(text, async (tx, id) => {
      // What the take reads again of the row it waited for (a change of another row after its
      // statement began is not in its snapshot, as it would not be without the early request).
      await tx.query(`UPDATE turns SET options = options || '{"instructions": "second system"}'::jsonb WHERE id = $1`, [id]);
    });
    const events = await client.waitForTurnEnd(turnId);
    expect(events.find((event) => event.type === 'turn-finish')).toMatchObject({ finishReason: 'stop' });
    expect(events.filter((event) => event.type === 'turn-start')).toHaveLength(1);
    expect(events.filter((event) => event.type === 'step-start')).toHaveLength(1);
    expect(
      events
        .filter((event) => event.type === 'text-delta')
        .map((event) => event.delta)
        .join(''),
    ).toBe(text);
    const sent = stack.scripted.requests.slice(requestsBefore);
    expect(sent).toHaveLength(2);
    expect((sent[1]!.body as { messages: { role: string; content: string }[] }).messages[0]).toEqual({ role: 'system', content: 'second system' });
    await waitForNoJobLeft(stack.resources.turnQueue);
    const ledger = await ledgerOf(turnId);
    expect(ledger.map((line) => [line.outcome, line.attempt, line.error?.code ?? null])).toEqual([
      ['failed', 1, 'aborted'],
      ['ok', 1, null],
    ]);
  });

  it('answers a turn from the request sent while it was taken, once, when nothing changed', async () => {
    const text = 'Sent before the take returned, shown after it.';
    const { turnId, client, requestsBefore } = await postWhileTakeWaits(text, async () => undefined);
    const events = await client.waitForTurnEnd(turnId);
    expect(events.map((event) => event.type).filter((type) => type !== 'text-delta')).toEqual(['turn-start', 'step-start', 'step-finish', 'turn-finish']);
    expect(
      events
        .filter((event) => event.type === 'text-delta')
        .map((event) => event.delta)
        .join(''),
    ).toBe(text);
    expect(stack.scripted.requests.length).toBe(requestsBefore + 1);
    await waitForNoJobLeft(stack.resources.turnQueue);
    expect((await ledgerOf(turnId)).map((line) => line.outcome)).toEqual(['ok']);
  });
});
