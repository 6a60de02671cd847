import { apiClient } from '../../support/http';
import { poll } from '../../support/poll';
import { startTestStack, type TestStack } from '../../support/stack';
import { scripted } from '../../support/tool-turns';
import { followBatchEvents } from '../../support/batch-events';
import { TestWsClient } from '../../support/ws-client';

/** Batches run on the turn machinery: every item a conversation of its own, results in input order. */
describe('running a batch', () => {
  const batchSlotsPerWorker = 8;
  let stack: TestStack;
  let api: ReturnType<typeof apiClient>;
  let apiKey: string;

  beforeAll(async () => {
    // Few slots, so that most of a batch waits in the queue.
    stack = await startTestStack({ workers: 2, env: { WORKER_CONCURRENCY: '4', BATCH_TURNS_PER_WORKER: String(batchSlotsPerWorker) } });
    ({ apiKey } = await stack.createUser('batcher'));
    api = apiClient(stack.url, apiKey);
  });
  afterAll(() => stack.close());

  /** Follows the batch's progress events until `predicate` holds for a frame; returns that frame. */
  async function batchWhen(id: string, predicate: (frame: any) => boolean): Promise<any> {
    const events = await followBatchEvents(stack.url, apiKey, id);
    try {
      return await events.waitFor((frame) => predicate(frame));
    } finally {
      events.close();
    }
  }
  /** The counts and usage GET shows (kept on the batch's row) are what its items say. */
  async function expectFiguresOfItems(id: string): Promise<void> {
    const { rows } = await stack.resources.db.query<{ status: string; count: string; tokens: string }>(
      `SELECT status, count(*) AS count, COALESCE(SUM((result->'usage'->>'totalTokens')::bigint), 0) AS tokens FROM batch_items WHERE batch_id = $1 GROUP BY status`,
      [id],
    );
    const shown = (await api.get(`/v1/batches/${id}`)).body;
    const counts: Record<string, number> = { queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 0 };
    for (const row of rows) counts[row.status] = Number(row.count);
    expect(shown.counts).toEqual({ total: Object.values(counts).reduce((sum, n) => sum + n, 0), waiting: 0, ...counts });
    expect(shown.usage.totalTokens).toBe(rows.reduce((sum, row) => sum + Number(row.tokens), 0));
  }
  const finished = (id: string) => batchWhen(id, (frame) => frame.type === 'batch-finish');
  const results = async (id: string, after?: number) =>
    (await fetch(`${stack.url}/v1/batches/${id}/results${after === undefined ? '' : `?after=${after}`}`, { headers: { authorization: `Bearer ${apiKey}` } })).text();

  it('runs the valid items of a JSONL batch with skipInvalid, and lists the skipped lines', async () => {
    const lines = [
      JSON.stringify({ customId: 'good-1', messages: [scripted({ text: 'first good' })] }),
      '{oops',
      JSON.stringify({ customId: 'good-2', messages: [scripted({ text: 'second good' })] }),
    ];
    const created = await fetch(`${stack.url}/v1/batches?skipInvalid=true`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/x-ndjson' },
      body: lines.join('\n'),
    }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }));
    expect(created.status).toBe(202);
    expect(created.body.skipped).toEqual([{ line: 2, message: 'not valid JSON' }]);
    expect(await finished(created.body.batchId)).toMatchObject({ status: 'completed', counts: { total: 2, succeeded: 2 } });
    const ran = (await results(created.body.batchId))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(ran.map((line) => [line.index, line.customId, line.text])).toEqual([
      [0, 'good-1', 'first good'],
      [1, 'good-2', 'second good'],
    ]);
  });

  it('runs 200 items, some with parallel tool calls and some over two messages, each once, results in input order', async () => {
    const items = Array.from({ length: 200 }, (_, i) => {
      if (i % 10 === 0) {
        const calls = [
          { name: 'calculator', arguments: { expression: `${i}+1` } },
          { name: 'calculator', arguments: { expression: `${i}*2` } },
        ];
        return { customId: `row-${i}`, messages: [scripted({ steps: [{ toolCalls: calls }, { text: `tools done ${i}` }] })] };
      }
      if (i % 10 === 1) return { customId: `row-${i}`, messages: [scripted({ text: `first ${i}` }), { role: 'assistant', content: 'noted' }, scripted({ text: `second ${i}` })] };
      return { customId: `row-${i}`, messages: [scripted({ text: `answer ${i}` })] };
    });
    const created = await api.post('/v1/batches', { items, concurrency: 16 });
    expect(created.status).toBe(202);
    const progress = await followBatchEvents(stack.url, apiKey, created.body.id);
    const end = await progress.finished(120_000).finally(() => progress.close());
    expect(end).toMatchObject({ status: 'completed', counts: { total: 200, queued: 0, running: 0, succeeded: 200, failed: 0, cancelled: 0 } });
    const done = (await api.get(`/v1/batches/${created.body.id}`)).body;
    expect(done.usage.totalTokens).toBeGreaterThan(0);
    await expectFiguresOfItems(created.body.id);
    expect(done.finishedAt).not.toBeNull();

    const lines = (await results(created.body.id))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines.map((line) => line.index)).toEqual(items.map((_, i) => i));
    expect(lines.map((line) => line.customId)).toEqual(items.map((item) => item.customId));
    expect(new Set(lines.map((line) => line.conversationId)).size).toBe(200);
    for (const line of lines) {
      const i = line.index as number;
      expect(line.status).toBe('succeeded');
      if (i % 10 === 0) {
        expect(line.text).toBe(`tools done ${i}`);
        expect(line.toolCalls).toEqual([
          { toolName: 'calculator', args: { expression: `${i}+1` }, result: expect.objectContaining({ result: i + 1 }), attempts: 1 },
          { toolName: 'calculator', args: { expression: `${i}*2` }, result: expect.objectContaining({ result: i * 2 }), attempts: 1 },
        ]);
      } else if (i % 10 === 1) {
        expect(line.text).toBe(`second ${i}`);
      } else {
        expect(line.text).toBe(`answer ${i}`);
      }
    }
    // Each message ran once: one turn per user message, and the context message between them.
    const turns = await stack.resources.db.query<{ count: string }>(
      'SELECT count(*) AS count FROM turns t JOIN batch_items b ON b.conversation_id = t.conversation_id WHERE b.batch_id = $1',
      [created.body.id],
    );
    expect(Number(turns.rows[0]!.count)).toBe(220);
    // Never more than `concurrency` items at once: in what followers were told, and in what ran.
    const running = progress.frames.filter((frame) => frame.type === 'batch-progress').map((frame) => frame.counts.running as number);
    expect(running.length).toBeGreaterThan(0);
    expect(Math.max(...running)).toBeLessThanOrEqual(16);
    const intervals = await stack.resources.db.query<{ created_at: Date; finished_at: Date }>(
      'SELECT t.created_at, t.finished_at FROM turns t JOIN batch_items b ON b.conversation_id = t.conversation_id WHERE b.batch_id = $1',
      [created.body.id],
    );
    // A turn counts from when it is queued (its item holds a slot) until it ends.
    expect(maxOverlap(intervals.rows.map((row) => [row.created_at.getTime(), row.finished_at.getTime()]))).toBeLessThanOrEqual(16);
    const secondMessages = (await api.get(`/v1/conversations/${lines[1].conversationId}`)).body.messages;
    expect(secondMessages.map((message: any) => message.role)).toEqual(['user', 'assistant', 'assistant', 'user', 'assistant']);
    // The line names the stored message its text is.
    expect(lines[1].messageId).toBe(secondMessages.at(-1).id);

    // A download continues after the last index it has.
    const rest = (await results(created.body.id, 197))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line).index);
    expect(rest).toEqual([198, 199]);
  });

  it('starts an interactive turn posted while a 500-item batch waits before the batch turns queued at that moment', async () => {
    // Every batch turn holds its slot until cancelled, so no queued one can start unless it takes the interactive turn's place.
    const items = Array.from({ length: 500 }, (_, i) => ({ messages: [scripted({ text: 'held', firstTokenDelayMs: 600_000 })], customId: String(i) }));
    const batch = await api.post('/v1/batches', { items, concurrency: 256 });
    const conversation = (await api.post('/v1/conversations', {})).body.id;
    const startedCount = async () =>
      Number(
        (
          await stack.resources.db.query<{ count: string }>(
            'SELECT count(*) AS count FROM turns t JOIN batch_items b ON b.conversation_id = t.conversation_id WHERE b.batch_id = $1 AND t.started_at IS NOT NULL',
            [batch.body.id],
          )
        ).rows[0]!.count,
      );
    await batchWhen(batch.body.id, (frame) => frame.counts.running === 256);
    // Every batch slot of both workers taken: the rest of the batch waits in the queue.
    const lanes = 2 * batchSlotsPerWorker;
    await poll(`fewer than ${lanes} batch turns started`, async () => (await startedCount()) >= lanes, 20_000);
    const interactive = await api.post(`/v1/conversations/${conversation}/turns`, { content: scripted({ text: 'me first' }) });
    const socket = await TestWsClient.connect(stack.url, { apiKey });
    try {
      socket.send({ type: 'subscribe', conversationId: conversation });
      const events = await socket.waitForTurnEnd(interactive.body.turnId);
      expect(events.at(-1)).toMatchObject({ type: 'turn-finish', turnId: interactive.body.turnId });
    } finally {
      socket.close();
    }
    expect(await startedCount()).toBe(lanes);
    await api.post(`/v1/batches/${batch.body.id}/cancel`);
    expect((await finished(batch.body.id)).status).toBe('cancelled');
  }, 120_000); // 500 items, 256 of them running at once: past 30 s on a loaded machine

  it('cancels: items not started never start, running ones are cancelled, ended ones keep their results', async () => {
    // Two quick items, then ones that stream for 10 s: those running at the cancel are still running when it lands.
    const items = Array.from({ length: 40 }, (_, i) => ({ customId: `c${i}`, messages: [i < 2 ? scripted({ text: `quick ${i}` }) : scripted({ tokens: 2000, tokenDelayMs: 5 })] }));
    const batch = (await api.post('/v1/batches', { items, concurrency: 4 })).body;
    await batchWhen(batch.id, (frame) => frame.counts.succeeded >= 2 && frame.counts.running > 0);
    const cancelling = await api.post(`/v1/batches/${batch.id}/cancel`);
    expect(cancelling.status).toBe(200);
    expect(['cancelling', 'cancelled']).toContain(cancelling.body.status);
    const cancelled = await finished(batch.id);
    expect(cancelled.status).toBe('cancelled');
    expect(cancelled.counts.queued + cancelled.counts.running).toBe(0);
    expect(cancelled.counts.succeeded + cancelled.counts.cancelled).toBe(40);
    expect(cancelled.counts.cancelled).toBeGreaterThan(30);
    await expectFiguresOfItems(batch.id);
    const lines = (await results(batch.id))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(40);
    for (const line of lines.filter((each) => each.status === 'cancelled')) expect(line.error.code).toBe('cancelled');
    const started = lines.filter((line) => line.status === 'cancelled' && line.conversationId);
    expect(started.length).toBeGreaterThan(0);
    for (const line of started) {
      const turns = await stack.resources.turns.listForConversation(line.conversationId);
      expect(turns.map((turn) => turn.status)).toEqual(['cancelled']);
    }
    // Nothing runs after the cancel.
    const active = await stack.resources.db.query<{ count: string }>(
      "SELECT count(*) AS count FROM turns t JOIN batch_items b ON b.conversation_id = t.conversation_id WHERE b.batch_id = $1 AND t.status IN ('queued', 'running', 'waiting_tools')",
      [batch.id],
    );
    expect(Number(active.rows[0]!.count)).toBe(0);
    expect((await api.post(`/v1/batches/${batch.id}/cancel`)).body.status).toBe('cancelled');
  });

  it('retries only the failed items, each in a new conversation, the earlier one kept', async () => {
    const failsOnce = (i: number) => scripted({ attempts: [{ error: { status: 400, message: `refused ${i}` } }, { text: `fine on retry ${i}` }] });
    const items = Array.from({ length: 6 }, (_, i) => ({ customId: `r${i}`, messages: [i % 3 === 0 ? failsOnce(i) : scripted({ text: `fine ${i}` })] }));
    const batch = (await api.post('/v1/batches', { items, concurrency: 6 })).body;
    const first = await finished(batch.id);
    expect(first.counts).toMatchObject({ succeeded: 4, failed: 2 });
    await expectFiguresOfItems(batch.id);
    const before = (await results(batch.id))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(before.filter((line) => line.status === 'failed').map((line) => [line.index, line.error.code])).toEqual([
      [0, 'provider_error'],
      [3, 'provider_error'],
    ]);

    const retried = await api.post(`/v1/batches/${batch.id}/retry`);
    expect(retried.body).toMatchObject({ requeued: 2, status: 'running' });
    const second = await finished(batch.id);
    expect(second.counts).toMatchObject({ succeeded: 6, failed: 0 });
    await expectFiguresOfItems(batch.id);
    const after = (await results(batch.id))
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(after.map((line) => line.text)).toEqual(['fine on retry 0', 'fine 1', 'fine 2', 'fine on retry 3', 'fine 4', 'fine 5']);
    expect(after[1].conversationId).toBe(before[1].conversationId);
    expect(after[0].conversationId).not.toBe(before[0].conversationId);
    expect((await api.get(`/v1/conversations/${before[0].conversationId}`)).status).toBe(200);
    expect((await api.post(`/v1/batches/${batch.id}/retry`)).body.requeued).toBe(0);
  });

  it('reports progress on the websocket at most four times a second while it changes, then one batch-finish', async () => {
    const items = Array.from({ length: 40 }, (_, i) => ({ messages: [scripted({ tokens: 30, tokenDelayMs: 3 })], customId: `p${i}` }));
    const batch = (await api.post('/v1/batches', { items, concurrency: 8 })).body;
    const socket = await TestWsClient.connect(stack.url, { apiKey });
    socket.send({ type: 'subscribe', batchId: batch.id });
    expect(await socket.waitFor((frame) => frame.type === 'subscribed')).toEqual({ type: 'subscribed', batchId: batch.id });
    const finish = await socket.waitFor((frame) => frame.type === 'batch-finish', 60_000);
    expect(finish).toEqual({ type: 'batch-finish', batchId: batch.id, status: 'completed', counts: expect.objectContaining({ total: 40, succeeded: 40 }) });
    const progress = socket.frames.filter((frame) => frame.type === 'batch-progress');
    expect(progress.length).toBeGreaterThan(1);
    expect(progress.at(-1)).toMatchObject({ batchId: batch.id, counts: { succeeded: 40 }, usage: { totalTokens: expect.any(Number) } });
    const ended = progress.map((frame) => frame.counts.succeeded as number);
    expect([...ended].sort((a, b) => a - b)).toEqual(ended);
    // Never two alike in a row: a frame says something changed.
    for (let i = 1; i < progress.length; i++) expect(progress[i]).not.toEqual(progress[i - 1]);

    const stranger = await TestWsClient.connect(stack.url, { apiKey: (await stack.createUser('stranger')).apiKey });
    stranger.send({ type: 'subscribe', batchId: batch.id });
    expect(await stranger.waitFor((frame) => frame.type === 'error')).toMatchObject({ code: 'not_found', batchId: batch.id });
    socket.close();
    stranger.close();
  });
});

/** The largest number of [start, end] intervals that hold at one moment (an end at a moment frees its slot before a start there takes it). */
function maxOverlap(intervals: [number, number][]): number {
  const moments = intervals.flatMap(
    ([start, end]) =>
      [
        [start, 1],
        [end, -1],
      ] as [number, number][],
  );
  moments.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let open = 0;
  let most = 0;
  for (const [, change] of moments) {
    open += change;
    most = Math.max(most, open);
  }
  return most;
}

/** Results come from the database page by page (500 a page): order and cursors hold across pages. */
describe('batch results past one page', () => {
  let stack: TestStack;
  let apiKey: string;

  beforeAll(async () => {
    // No worker: the items are ended in the database directly, nothing runs them.
    stack = await startTestStack({ workers: 0 });
    ({ apiKey } = await stack.createUser('pages'));
  });
  afterAll(() => stack.close());

  it('streams 1,300 ended items in input order, each once, skipping unended ones, and continues ?after= mid-page', async () => {
    const TOTAL = 1300;
    const items = Array.from({ length: TOTAL }, (_, i) => ({ customId: `k${i}`, messages: [scripted({ text: 'unused' })] }));
    const created = await apiClient(stack.url, apiKey).post('/v1/batches', { items, concurrency: 1 });
    expect(created.status).toBe(202);
    // Its first item claimed (the claim would overwrite an end written before it).
    const progress = await followBatchEvents(stack.url, apiKey, created.body.id);
    await progress.waitFor((frame) => frame.counts?.running === 1).finally(() => progress.close());
    const unended = (position: number) => position % 97 === 5;
    await stack.resources.db.query(
      `UPDATE batch_items SET status = CASE WHEN position % 3 = 0 THEN 'failed' ELSE 'succeeded' END, finished_at = clock_timestamp(),
         result = jsonb_build_object('text', 'r' || position, 'toolCalls', '[]'::jsonb, 'usage', jsonb_build_object('promptTokens', 0, 'completionTokens', 0, 'totalTokens', 0))
       WHERE batch_id = $1 AND position % 97 <> 5`,
      [created.body.id],
    );
    const ended = Array.from({ length: TOTAL }, (_, i) => i).filter((position) => !unended(position));
    const download = async (after?: number) => {
      const response = await fetch(`${stack.url}/v1/batches/${created.body.id}/results${after === undefined ? '' : `?after=${after}`}`, {
        headers: { authorization: `Bearer ${apiKey}` },
      });
      expect(response.status).toBe(200);
      return (await response.text())
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
    };

    const all = await download();
    expect(all.map((line) => line.index)).toEqual(ended);
    expect(all.map((line) => line.customId)).toEqual(ended.map((position) => `k${position}`));
    expect(all.map((line) => line.text)).toEqual(ended.map((position) => `r${position}`));
    expect(all.map((line) => line.status)).toEqual(ended.map((position) => (position % 3 === 0 ? 'failed' : 'succeeded')));
    // From the middle of the second page, and from a page's last line.
    for (const after of [750, ended[499]!]) expect((await download(after)).map((line) => line.index)).toEqual(ended.filter((position) => position > after));
  }, 60_000);
});
