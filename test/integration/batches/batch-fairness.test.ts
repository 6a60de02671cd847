import { followBatchEvents } from '../../support/batch-events';
import { apiClient } from '../../support/http';
import { poll } from '../../support/poll';
import { startTestStack, type TestStack } from '../../support/stack';
import { scripted } from '../../support/tool-turns';

/**
 * Two users' batches share the workers: one user's large batch, even at the highest priority,
 * does not hold back another user's small one until it is done.
 */
describe('batches of two users', () => {
  let stack: TestStack;

  beforeAll(async () => {
    // Two slots in all, so nearly every item waits in the queue for one.
    stack = await startTestStack({ workers: 1, env: { WORKER_CONCURRENCY: '2' } });
  });
  afterAll(() => stack.close());

  it('run side by side: a small batch at priority 0 ends while a large one at priority 9 of another user is far from done', async () => {
    const [large, small] = await Promise.all([stack.createUser('large'), stack.createUser('small')]);
    const item = (text: string) => ({ messages: [scripted({ text, tokens: 5, tokenDelayMs: 5 })] });
    const big = await apiClient(stack.url, large.apiKey).post('/v1/batches', {
      items: Array.from({ length: 300 }, (_, i) => item(`large ${i}`)),
      concurrency: 64,
      priority: 9,
    });
    expect(big.status).toBe(202);
    const bigEvents = await followBatchEvents(stack.url, large.apiKey, big.body.id);
    try {
      // The large batch holds its 64 slots' worth of queued turns before the small one arrives.
      await bigEvents.waitFor((frame) => frame.type === 'batch-progress' && frame.counts.running === 64, 60_000);
      const little = await apiClient(stack.url, small.apiKey).post('/v1/batches', {
        items: Array.from({ length: 20 }, (_, i) => item(`small ${i}`)),
        concurrency: 4,
        priority: 0,
      });
      expect(little.status).toBe(202);
      const littleEvents = await followBatchEvents(stack.url, small.apiKey, little.body.id);
      const end = await littleEvents.finished(120_000).finally(() => littleEvents.close());
      expect(end.counts).toMatchObject({ total: 20, succeeded: 20 });

      const largeCounts = (await apiClient(stack.url, large.apiKey).get(`/v1/batches/${big.body.id}`)).body.counts;
      // Served in turn with the small batch, the large one got about as many turns meanwhile,
      // not all of its 300 first.
      expect(largeCounts.succeeded).toBeLessThan(150);
      await bigEvents.finished(180_000);
    } finally {
      bigEvents.close();
    }
  }, 240_000);
});

describe('batch turns beside interactive ones', () => {
  let stack: TestStack;

  beforeAll(async () => {
    // Two slots for interactive turns; one for batch turns.
    stack = await startTestStack({ workers: 1, env: { WORKER_CONCURRENCY: '2', BATCH_TURNS_PER_WORKER: '1' } });
  });
  afterAll(() => stack.close());

  it('run at most BATCH_TURNS_PER_WORKER at once, and never keep an interactive turn from starting', async () => {
    const { apiKey } = await stack.createUser('both');
    const api = apiClient(stack.url, apiKey);
    const slow = { messages: [scripted({ tokens: 20, tokenDelayMs: 50 })] };
    const batch = await api.post('/v1/batches', { items: Array.from({ length: 4 }, () => slow), concurrency: 4 });
    expect(batch.status).toBe(202);
    const batchTurns = async () =>
      (
        await stack.resources.db.query<{ id: string; status: string; started_at: Date | null; finished_at: Date | null }>(
          'SELECT t.id, t.status, t.started_at, t.finished_at FROM turns t JOIN batch_items b ON b.conversation_id = t.conversation_id WHERE b.batch_id = $1',
          [batch.body.id],
        )
      ).rows;
    await poll('no batch turn started', async () => (await batchTurns()).some((row) => row.status === 'running'), 30_000);

    const conversation = (await api.post('/v1/conversations', {})).body.id;
    const interactive = await api.post(`/v1/conversations/${conversation}/turns`, { content: scripted({ text: 'now' }) });
    const events = await followBatchEvents(stack.url, apiKey, batch.body.id);
    const finished = events.finished(60_000).finally(() => events.close());
    expect((await finished).counts.succeeded).toBe(4);
    // The most batch turns running at one moment, from when each started and ended (a turn's
    // end before another's start at the same millisecond): every moment counts, not only those
    // a loop happened to sample.
    const periods = (await batchTurns()).map((row) => [row.started_at!.getTime(), row.finished_at!.getTime()] as const);
    expect(periods).toHaveLength(4);
    const changes = periods
      .flatMap(
        ([start, end]) =>
          [
            [start, 1],
            [end, -1],
          ] as const,
      )
      .sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let running = 0;
    let mostRunning = 0;
    for (const [, change] of changes) mostRunning = Math.max(mostRunning, (running += change));
    expect(mostRunning).toBe(1);

    const [mine] = (await stack.resources.db.query<{ started_at: Date }>('SELECT started_at FROM turns WHERE id = $1', [interactive.body.turnId])).rows;
    const firstBatchEnd = Math.min(...(await batchTurns()).map((row) => row.finished_at!.getTime()));
    expect(mine!.started_at.getTime()).toBeLessThan(firstBatchEnd);
  }, 120_000);
});
