import { apiClient } from '../../support/http';
import { startTestStack, type TestStack } from '../../support/stack';

/** `POST /v1/batches`: JSON or JSONL, checked whole, stored whole or not at all. */
describe('batch submission', () => {
  let stack: TestStack;
  let apiKey: string;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    stack = await startTestStack({ workers: 0, env: { MAX_BATCH_ITEMS: '6000', MAX_BATCH_BYTES: String(2 * 1024 * 1024) } });
    ({ apiKey } = await stack.createUser('batcher'));
    api = apiClient(stack.url, apiKey);
  });
  afterAll(() => stack.close());

  const postJsonl = (lines: string[], query = '', headers: Record<string, string> = {}) =>
    fetch(`${stack.url}/v1/batches${query}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/x-ndjson', ...headers },
      body: lines.join('\n'),
    }).then(async (response) => ({ status: response.status, body: (await response.json()) as any }));
  const storedBatches = async () => (await api.get('/v1/batches?limit=100')).body.data.length as number;

  it('takes a JSON batch with defaults, shows it with its counts, and lists it', async () => {
    const created = await api.post('/v1/batches', {
      items: [
        { customId: 'a', messages: ['one'] },
        { messages: ['two', { role: 'assistant', content: 'ok' }, 'three'], model: 'other' },
        { customId: 'c', messages: ['four'] },
      ],
      concurrency: 2,
      metadata: { run: 'nightly' },
      defaults: { system: 'Be brief.', model: 'scripted' },
    });
    expect(created.status).toBe(202);
    expect(created.body.batchId).toBe(created.body.id);
    expect(created.body).toMatchObject({
      id: expect.stringMatching(/^batch_/),
      status: 'queued',
      concurrency: 2,
      priority: 5,
      metadata: { run: 'nightly' },
      counts: { total: 3, queued: 3, running: 0, waiting: 0, succeeded: 0, failed: 0, cancelled: 0 },
      usage: { promptTokens: 0, completionTokens: 0, totalTokens: 0 },
      skipped: [],
      etaSeconds: null,
    });
    // Its first items start at once (no worker runs them here).
    const shown = (await api.get(`/v1/batches/${created.body.id}`)).body;
    expect(shown).toMatchObject({ id: created.body.id, concurrency: 2, metadata: { run: 'nightly' }, counts: { total: 3 } });
    expect(shown.counts.running).toBeLessThanOrEqual(2);
    expect((await api.get('/v1/batches')).body.data.map((batch: { id: string }) => batch.id)).toContain(created.body.id);
    const items = await stack.resources.db.query<{ position: number; line: number; custom_id: string | null; spec: any }>(
      'SELECT position, line, custom_id, spec FROM batch_items WHERE batch_id = $1 ORDER BY position',
      [created.body.id],
    );
    expect(items.rows.map((row) => [row.position, row.line, row.custom_id, row.spec.model, row.spec.system])).toEqual([
      [0, 1, 'a', 'scripted', 'Be brief.'],
      [1, 2, null, 'other', 'Be brief.'],
      [2, 3, 'c', 'scripted', 'Be brief.'],
    ]);
    expect((await apiClient(stack.url, (await stack.createUser('other')).apiKey).get(`/v1/batches/${created.body.id}`)).status).toBe(404);
  });

  it('returns the same batch for the same Idempotency-Key, and refuses the key with another body', async () => {
    const body = { items: [{ messages: ['same'] }] };
    const first = await api.post('/v1/batches', body, { 'idempotency-key': 'nightly-1' });
    const again = await api.post('/v1/batches', body, { 'idempotency-key': 'nightly-1' });
    expect([first.status, again.status]).toEqual([202, 200]);
    expect(again.body.batchId).toBe(first.body.batchId);
    const other = await api.post('/v1/batches', { items: [{ messages: ['different'] }] }, { 'idempotency-key': 'nightly-1' });
    expect([other.status, other.body.error.code]).toEqual([409, 'idempotency_conflict']);
  });

  it('names every bad JSONL line and stores nothing; with skipInvalid it runs the rest and lists what it skipped', async () => {
    const lines = [
      JSON.stringify({ customId: 'ok-1', messages: ['fine'] }),
      '',
      '{"messages": ["broken"',
      JSON.stringify({ customId: 'ok-2', messages: ['fine too'] }),
      JSON.stringify({ customId: 'no-user', messages: [{ role: 'assistant', content: 'only me' }] }),
      JSON.stringify({ customId: 'ok-1', messages: ['duplicate id'] }),
      JSON.stringify({ messages: ['x'], maxSteps: 0 }),
      JSON.stringify({ messages: ['x'], colour: 'red' }),
      // Two problems on one line: both are named.
      JSON.stringify({ messages: ['x'], maxSteps: 0, tools: 'calculator' }),
    ];
    const before = await storedBatches();
    const refused = await postJsonl(lines);
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/^invalid batch: line 3: not valid JSON \(and 6 more\); nothing was stored/);
    expect(refused.body.error.details).toEqual([
      { line: 3, message: 'not valid JSON' },
      { line: 5, field: 'messages', message: 'needs at least one user message' },
      { line: 6, field: 'customId', message: '"ok-1" is used by an earlier item' },
      { line: 7, field: 'maxSteps', message: expect.any(String) },
      { line: 8, field: 'colour', message: 'is not a known field' },
      { line: 9, field: 'tools', message: expect.any(String) },
      { line: 9, field: 'maxSteps', message: expect.any(String) },
    ]);
    expect(await storedBatches()).toBe(before);

    const skipping = await postJsonl(lines, '?skipInvalid=true&concurrency=4');
    expect(skipping.status).toBe(202);
    expect(skipping.body.counts.total).toBe(2);
    expect(skipping.body.concurrency).toBe(4);
    expect(skipping.body.skipped.map((each: { line: number }) => each.line)).toEqual([3, 5, 6, 7, 8, 9]);
    expect(skipping.body.skipped.at(-1).message).toMatch(/^tools: .+; maxSteps: .+/);
  });

  it('refuses what it cannot take with the limit named: too many items, too many bytes, another media type, unknown tools', async () => {
    const many = Array.from({ length: 6001 }, (_, i) => JSON.stringify({ messages: [`item ${i}`] }));
    const tooMany = await postJsonl(many);
    expect([tooMany.status, tooMany.body.error.message]).toEqual([400, expect.stringContaining('at most 6000 items (MAX_BATCH_ITEMS)')]);
    const huge = await postJsonl([JSON.stringify({ messages: ['x'.repeat(3 * 1024 * 1024)] })]);
    expect([huge.status, huge.body.error.code]).toEqual([413, 'payload_too_large']);
    expect(huge.body.error.message).toContain(`at most ${2 * 1024 * 1024} bytes (MAX_BATCH_BYTES)`);
    const text = await fetch(`${stack.url}/v1/batches`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'text/csv' }, body: 'a,b' });
    expect(text.status).toBe(415);
    const unknownTool = await api.post('/v1/batches', { items: [{ messages: ['x'], tools: ['no_such_tool'] }] });
    expect(unknownTool.status).toBe(400);
    expect((await api.post('/v1/batches', { items: [] })).status).toBe(400);
    expect((await api.post('/v1/batches', { items: [{ messages: ['x'] }], concurrency: 1000 })).body.error.message).toMatch(/concurrency/);
  });

  it('accepts 5,000 JSONL items in one request', async () => {
    const lines = Array.from({ length: 5000 }, (_, i) => JSON.stringify({ customId: `row-${i}`, messages: [`classify ticket ${i}`] }));
    const created = await postJsonl(lines);
    expect(created.status).toBe(202);
    expect(created.body.counts).toMatchObject({ total: 5000, queued: 5000 });
    const last = await stack.resources.db.query<{ custom_id: string; line: number }>('SELECT custom_id, line FROM batch_items WHERE batch_id = $1 AND position = 4999', [
      created.body.id,
    ]);
    expect(last.rows[0]).toEqual({ custom_id: 'row-4999', line: 5000 });
  });

  it('answers 400 to a results cursor out of range, before any line is written', async () => {
    const created = await api.post('/v1/batches', { items: [{ messages: ['x'] }] });
    expect(created.status).toBe(202);
    for (const after of ['2147483648', '99999999999999999999', 'abc', '-2', '1.5', '']) {
      const response = await api.get(`/v1/batches/${created.body.id}/results?after=${after}`);
      expect([after, response.status, response.body.error.code]).toEqual([after, 400, 'invalid_request']);
    }
    const fine = await fetch(`${stack.url}/v1/batches/${created.body.id}/results?after=2147483647`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect([fine.status, await fine.text()]).toEqual([200, '']);
  });
});
