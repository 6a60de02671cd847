import { apiClient, openUpload, waitForMetric } from '../../support/http';
import { startTestStack, type TestStack } from '../../support/stack';

/**
 * `POST /v1/batches` under load and bad input: a bounded number read at once, JSONL streamed
 * line by line into the database, every line problem named by its line, and never a 500.
 */
describe('batch submission limits', () => {
  let stack: TestStack;
  let apiKey: string;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    stack = await startTestStack({ workers: 0, env: { MAX_BATCH_SUBMISSIONS_IN_FLIGHT: '2', MAX_BATCH_JSON_BYTES: String(256 * 1024), MAX_BATCH_ITEMS: '50000' } });
    ({ apiKey } = await stack.createUser('bulk'));
    api = apiClient(stack.url, apiKey);
  });
  afterAll(() => stack.close());

  const jsonlHeaders = () => ({ authorization: `Bearer ${apiKey}`, 'content-type': 'application/x-ndjson' });
  const postJsonl = (body: string | Buffer, query = '') =>
    fetch(`${stack.url}/v1/batches${query}`, { method: 'POST', headers: jsonlHeaders(), body }).then(async (response) => ({
      status: response.status,
      body: (await response.json()) as any,
    }));
  const postJson = (body: string | Buffer) =>
    fetch(`${stack.url}/v1/batches`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' }, body }).then(async (response) => ({
      status: response.status,
      body: (await response.json()) as any,
    }));
  const storedRows = async () => {
    const { rows } = await stack.resources.db.query<{ batches: string; items: string }>(
      'SELECT (SELECT count(*) FROM batches) AS batches, (SELECT count(*) FROM batch_items) AS items',
    );
    return { batches: Number(rows[0]!.batches), items: Number(rows[0]!.items) };
  };
  const line = (text: string) => JSON.stringify({ messages: [text] });

  it('refuses a submission past MAX_BATCH_SUBMISSIONS_IN_FLIGHT at once with 503 and Retry-After, before reading its body', async () => {
    const held = [openUpload(stack.url, '/v1/batches', jsonlHeaders()), openUpload(stack.url, '/v1/batches', jsonlHeaders())];
    held.forEach((upload, index) => upload.write(`${line(`held ${index}`)}\n`));
    await waitForMetric(stack.url, 'switchyard_batch_submissions_in_flight', 2);

    // Its body is never ended: only an answer given before reading it can arrive.
    const third = openUpload(stack.url, '/v1/batches', jsonlHeaders());
    third.write(`${line('one too many')}\n`);
    const refused = await third.response;
    expect([refused.status, refused.body.error.code]).toEqual([503, 'unavailable']);
    expect(refused.headers['retry-after']).toMatch(/^\d+$/);
    expect(refused.body.error.message).toContain('MAX_BATCH_SUBMISSIONS_IN_FLIGHT');
    third.end();

    held.forEach((upload) => upload.end(`${line('and the last line')}\n`));
    const accepted = await Promise.all(held.map((upload) => upload.response));
    expect(accepted.map((each) => [each.status, each.body.counts.total])).toEqual([
      [202, 2],
      [202, 2],
    ]);
    await waitForMetric(stack.url, 'switchyard_batch_submissions_in_flight', 0);
    expect((await postJsonl(line('a slot is free again'))).status).toBe(202);
  });

  it('streams a JSONL batch of many megabytes in, every item stored, though no line of it may exceed MAX_BATCH_JSON_BYTES', async () => {
    const count = 40_000;
    const filler = 'x'.repeat(100);
    const body = Array.from({ length: count }, (_, i) => JSON.stringify({ customId: `row-${i}`, messages: [`ticket ${i}: ${filler}`] })).join('\n') + '\n';
    expect(body.length).toBeGreaterThan(5 * 1024 * 1024);
    const created = await postJsonl(body);
    expect(created.status).toBe(202);
    expect(created.body.counts).toMatchObject({ total: count, queued: count });
    const { rows } = await stack.resources.db.query<{ n: string; last: string; line: number }>(
      'SELECT count(*) AS n, max(custom_id) FILTER (WHERE position = $2) AS last, max(line) AS line FROM batch_items WHERE batch_id = $1',
      [created.body.id, count - 1],
    );
    expect(rows[0]).toEqual({ n: String(count), last: `row-${count - 1}`, line: count });

    // A JSON body is parsed whole: it has the smaller limit.
    const json = await postJson(JSON.stringify({ items: Array.from({ length: 4000 }, (_, i) => ({ messages: [`item ${i} ${filler}`] })) }));
    expect([json.status, json.body.error.code]).toEqual([413, 'payload_too_large']);
    expect(json.body.error.message).toContain('MAX_BATCH_JSON_BYTES');
  });

  it('leaves no row of a refused batch, also when the bad line comes after thousands of good ones', async () => {
    const before = await storedRows();
    const good = Array.from({ length: 5000 }, (_, i) => line(`fine ${i}`));
    const refused = await postJsonl([...good, '{"messages": ["cut'].join('\n'));
    expect([refused.status, refused.body.error.details]).toEqual([400, [{ line: 5001, message: 'not valid JSON' }]]);
    const tooLong = await postJsonl([...good, line('y'.repeat(300 * 1024))].join('\n'));
    expect([tooLong.status, tooLong.body.error.details[0].line]).toEqual([400, 5001]);
    expect(tooLong.body.error.message).toContain('MAX_BATCH_JSON_BYTES');
    // Refused at its 50,001st line, while the rest is still being sent: the client still gets the answer.
    const tooMany = await postJsonl(Array.from({ length: 60_000 }, () => line('x')).join('\n'));
    expect([tooMany.status, tooMany.body.error.message]).toEqual([400, expect.stringContaining('at most 50000 items (MAX_BATCH_ITEMS)')]);
    expect(await storedRows()).toEqual(before);
  });

  it('names a line the store cannot hold (a NUL) by its line, and skipInvalid skips it', async () => {
    const lines = [line('fine'), JSON.stringify({ messages: ['a\u0000b'] }), line('fine too')];
    const refused = await postJsonl(lines.join('\n'));
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/^invalid batch: line 2: messages\[0\]: must not contain the NUL character/);
    expect(refused.body.error.details).toEqual([{ line: 2, field: 'messages[0]', message: expect.stringContaining('NUL') }]);

    const skipping = await postJsonl(lines.join('\n'), '?skipInvalid=true');
    expect(skipping.status).toBe(202);
    expect(skipping.body.counts.total).toBe(2);
    expect(skipping.body.skipped).toEqual([{ line: 2, message: expect.stringMatching(/^messages\[0\]: must not contain the NUL/) }]);
  });

  it('answers 400, never a 500, to a NUL or a lone surrogate in metadata and to nesting 100,000 deep', async () => {
    const nul = await postJson('{"items": [{"messages": ["x"]}], "metadata": {"note": "a\\u0000b"}}');
    expect([nul.status, nul.body.error.details]).toEqual([400, [{ line: 0, field: 'metadata.note', message: expect.stringContaining('NUL') }]]);
    const surrogate = await postJson('{"items": [{"messages": ["x"]}], "metadata": {"note": "\\ud800"}}');
    expect([surrogate.status, surrogate.body.error.details[0].field]).toEqual([400, 'metadata.note']);
    const itemMetadata = await postJson('{"items": [{"messages": ["x"], "metadata": {"note": "\\udc00"}}]}');
    expect([itemMetadata.status, itemMetadata.body.error.details]).toEqual([400, [{ line: 1, field: 'metadata.note', message: expect.stringContaining('lone surrogate') }]]);

    const deep = '['.repeat(100_000) + ']'.repeat(100_000);
    const deepLine = await postJsonl(`${line('fine')}\n{"messages": ["x"], "metadata": {"deep": ${deep}}}`);
    expect([deepLine.status, deepLine.body.error.details[0].line]).toEqual([400, 2]);
    expect(deepLine.body.error.details[0].message).toMatch(/nested deeper than/);
    const deepMetadata = await postJson(`{"items": [{"messages": ["x"]}], "metadata": {"deep": ${deep}}}`);
    expect([deepMetadata.status, deepMetadata.body.error.code]).toEqual([400, 'invalid_request']);
    const deepItem = await postJson(`{"items": [{"messages": ["x"], "metadata": {"deep": ${deep}}}]}`);
    expect([deepItem.status, deepItem.body.error.details[0].line]).toEqual([400, 1]);
  });

  it('refuses a body that is not valid UTF-8 with 400, JSONL or JSON', async () => {
    const before = await storedRows();
    const latin1 = Buffer.concat([Buffer.from(`${line('fine')}\n{"messages": ["caf`), Buffer.from([0xe9]), Buffer.from('"]}\n')]);
    const jsonl = await postJsonl(latin1);
    expect([jsonl.status, jsonl.body.error.code]).toEqual([400, 'invalid_request']);
    expect(jsonl.body.error.message).toMatch(/line 2.*not valid UTF-8/);
    const skipping = await postJsonl(latin1, '?skipInvalid=true');
    expect(skipping.status).toBe(400);
    const json = await postJson(Buffer.concat([Buffer.from('{"items": [{"messages": ["caf'), Buffer.from([0xe9]), Buffer.from('"]}]}')]));
    expect([json.status, json.body.error.code]).toEqual([400, 'invalid_request']);
    expect(json.body.error.message).toMatch(/not valid UTF-8/);
    expect(await storedRows()).toEqual(before);
  });
});
