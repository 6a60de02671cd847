import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import OpenAI, { toFile } from 'openai';
import { followBatchEvents } from '../../support/batch-events';
import { batchLine, openAiClient } from '../../support/openai-sdk';
import { withInsertsRefused } from '../../support/refused-inserts';
import { runToExit } from '../../support/processes';
import { scripted } from '../../support/scripted';
import { startTestStack, type TestStack } from '../../support/stack';

// Named after Switchyard's builtin and declaring no parameters: Switchyard's, run here.
const calculator = { type: 'function', function: { name: 'calculator' } };
// The same name with the caller's own schema: the caller's.
const adds = { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } } };
const ownCalculator = { type: 'function', function: { name: 'calculator', parameters: adds } };
const weather = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };

/** OpenAI's Batch API over Switchyard batches, through OpenAI's SDK (docs/API.md, "OpenAI-compatible routes"). */
describe('OpenAI-compatible batches', () => {
  let stack: TestStack;
  let client: OpenAI;
  let apiKey: string;

  beforeAll(async () => {
    stack = await startTestStack({ workers: 1, env: { APPROVAL_REQUIRED_TOOLS: 'random_number' } });
    ({ apiKey } = await stack.createUser('openai-batches'));
    client = openAiClient(stack.url, apiKey);
  });
  afterAll(() => stack.close());

  const upload = async (lines: string[]) => client.files.create({ file: await toFile(Buffer.from(`${lines.join('\n')}\n`), 'batch.jsonl'), purpose: 'batch' });
  const fileLines = async (id: string) =>
    (await (await client.files.content(id)).text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));

  it('runs a file of chat completion lines as a Switchyard batch: progress events, output and error files in OpenAI line shapes', async () => {
    const input = await upload([
      batchLine('plain', {
        model: 'scripted',
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: scripted({ text: 'Plain answer.' }) },
        ],
        temperature: 0.2,
        max_tokens: 50,
      }),
      batchLine('server-tool', {
        model: 'scripted',
        messages: [{ role: 'user', content: scripted({ steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '2+3' } }] }, { text: 'Five.' }] }) }],
        tools: [calculator],
      }),
      batchLine('caller-tool', {
        model: 'scripted',
        messages: [{ role: 'user', content: scripted({ toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] }) }],
        tools: [weather],
      }),
      batchLine('own-calculator', {
        model: 'scripted',
        messages: [{ role: 'user', content: `own-calculator ${scripted({ toolCalls: [{ name: 'calculator', arguments: { a: 2, b: 3 } }] })}` }],
        tools: [ownCalculator],
      }),
      batchLine('context', {
        model: 'scripted',
        messages: [
          { role: 'user', content: 'Earlier question' },
          { role: 'assistant', content: 'Earlier answer' },
          { role: 'user', content: scripted({ text: 'With context.' }) },
        ],
      }),
      batchLine('broken', { model: 'scripted', messages: [{ role: 'user', content: scripted({ error: { status: 400, message: 'refused by the provider' } }) }] }),
    ]);
    const created = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { job: 'nightly' } });
    expect(created).toMatchObject({
      object: 'batch',
      status: 'in_progress',
      input_file_id: input.id,
      endpoint: '/v1/chat/completions',
      metadata: { job: 'nightly' },
      request_counts: { total: 6 },
    });

    // The same batch natively: its progress events, its id.
    const events = await followBatchEvents(stack.url, apiKey, created.id);
    try {
      expect(await events.finished()).toMatchObject({ status: 'completed', counts: { total: 6, succeeded: 5, failed: 1 } });
    } finally {
      events.close();
    }
    const batch = await client.batches.retrieve(created.id);
    expect(batch).toMatchObject({ status: 'completed', request_counts: { total: 6, completed: 5, failed: 1 } });
    expect(batch.completed_at).toEqual(expect.any(Number));

    const output = await fileLines(batch.output_file_id!);
    expect(output.map((line) => line.custom_id)).toEqual(['plain', 'server-tool', 'caller-tool', 'own-calculator', 'context']);
    for (const line of output) {
      expect(line).toMatchObject({ id: expect.stringMatching(/^batch_req_/), error: null, response: { status_code: 200, request_id: expect.stringMatching(/^turn_/) } });
      expect(line.response.body).toMatchObject({
        object: 'chat.completion',
        model: 'scripted',
        choices: [{ index: 0, message: { role: 'assistant' } }],
        usage: { total_tokens: expect.any(Number) },
      });
    }
    const [plain, serverTool, callerTool, ownCalculatorCall, context] = output.map((line) => line.response.body);
    expect(plain.choices[0]).toMatchObject({ message: { content: 'Plain answer.' }, finish_reason: 'stop' });
    expect(serverTool.choices[0]).toMatchObject({ message: { content: 'Five.' }, finish_reason: 'stop' });
    expect(serverTool.switchyard.toolCalls).toEqual([expect.objectContaining({ toolName: 'calculator', args: { expression: '2+3' }, result: { expression: '2+3', result: 5 } })]);
    expect(callerTool.choices[0]).toMatchObject({
      message: { content: null, tool_calls: [{ type: 'function', function: { name: 'get_weather', arguments: JSON.stringify({ city: 'Oslo' }) } }] },
      finish_reason: 'tool_calls',
    });
    // A caller's `calculator` reaches the model with the caller's schema, and its call is the caller's.
    expect(ownCalculatorCall.choices[0]).toMatchObject({
      message: { content: null, tool_calls: [{ type: 'function', function: { name: 'calculator', arguments: JSON.stringify({ a: 2, b: 3 }) } }] },
      finish_reason: 'tool_calls',
    });
    expect(ownCalculatorCall.switchyard.toolCalls).toEqual([]);
    const ownRequest = stack.scripted.requests.find((request: any) => JSON.stringify(request.body.messages).includes('own-calculator'))!.body as any;
    expect(ownRequest.tools.map((tool: any) => [tool.function.name, tool.function.parameters])).toEqual([['calculator', adds]]);
    expect(context.choices[0].message.content).toBe('With context.');
    const contextRequest = stack.scripted.requests.filter((request: any) => JSON.stringify(request.body.messages).includes('With context.')).at(-1)!.body as any;
    expect(contextRequest.messages.map((message: any) => message.role)).toEqual(['user', 'assistant', 'user']);
    const plainRequest = stack.scripted.requests.filter((request: any) => JSON.stringify(request.body.messages).includes('Plain answer.')).at(-1)!.body as any;
    expect(plainRequest.messages[0]).toEqual({ role: 'system', content: 'Be brief.' });

    expect(await fileLines(batch.error_file_id!)).toEqual([
      {
        id: expect.stringMatching(/^batch_req_/),
        custom_id: 'broken',
        response: null,
        error: { code: expect.any(String), message: expect.stringContaining('refused by the provider') },
      },
    ]);
    expect((await client.batches.list()).data.map((each) => each.id)).toContain(created.id);
  }, 60_000);

  it('runs a file of /v1/responses lines: output lines carry response objects, and a line for another endpoint fails the batch', async () => {
    const responseLine = (customId: string, body: Record<string, unknown>) => JSON.stringify({ custom_id: customId, method: 'POST', url: '/v1/responses', body });
    const input = await upload([
      responseLine('answer', { model: 'scripted', instructions: 'Be brief.', input: scripted({ text: 'A response line.' }) }),
      responseLine('server-tool', {
        input: [{ role: 'user', content: scripted({ steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '2+3' } }] }, { text: 'Five.' }] }) }],
        tools: [{ type: 'function', name: 'calculator' }],
      }),
      responseLine('caller-tool', {
        model: 'scripted',
        input: scripted({ toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] }),
        tools: [{ type: 'function', ...weather.function }],
      }),
    ]);
    const created = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/responses', completion_window: '24h' });
    expect(created).toMatchObject({ status: 'in_progress', endpoint: '/v1/responses', request_counts: { total: 3 } });
    const events = await followBatchEvents(stack.url, apiKey, created.id);
    try {
      expect(await events.finished()).toMatchObject({ status: 'completed', counts: { total: 3, succeeded: 3 } });
    } finally {
      events.close();
    }
    const batch = await client.batches.retrieve(created.id);
    const output = await fileLines(batch.output_file_id!);
    expect(output.map((line) => [line.custom_id, line.response.status_code, line.error])).toEqual([
      ['answer', 200, null],
      ['server-tool', 200, null],
      ['caller-tool', 200, null],
    ]);
    const [answer, serverTool, callerTool] = output.map((line) => line.response.body);
    expect(answer).toMatchObject({
      id: expect.stringMatching(/^resp_/),
      object: 'response',
      status: 'completed',
      model: 'scripted',
      instructions: 'Be brief.',
      output_text: 'A response line.',
      output: [{ type: 'message', role: 'assistant', status: 'completed', content: [{ type: 'output_text', text: 'A response line.' }] }],
      usage: { total_tokens: expect.any(Number) },
    });
    expect(serverTool).toMatchObject({
      output_text: 'Five.',
      switchyard: { toolCalls: [expect.objectContaining({ toolName: 'calculator', result: { expression: '2+3', result: 5 } })] },
    });
    expect(callerTool.output).toEqual([expect.objectContaining({ type: 'function_call', name: 'get_weather', arguments: JSON.stringify({ city: 'Oslo' }) })]);
    const answerRequest = stack.scripted.requests.filter((request: any) => JSON.stringify(request.body.messages).includes('A response line.')).at(-1)!.body as any;
    expect(answerRequest.messages[0]).toEqual({ role: 'system', content: 'Be brief.' });

    const mixed = await upload([responseLine('fine', { input: 'Hi' }), batchLine('other', { model: 'scripted', messages: [{ role: 'user', content: 'Hi' }] })]);
    const refused = await client.batches.create({ input_file_id: mixed.id, endpoint: '/v1/responses', completion_window: '24h' });
    expect(refused).toMatchObject({ status: 'failed', errors: { data: [expect.objectContaining({ line: 2, param: 'url' })] } });
  }, 60_000);

  it('fails a batch whose line names a tool needing approval as a function declaring no parameters: unsupported_parameter on body.tools', async () => {
    const input = await upload([
      batchLine('ok', { model: 'scripted', messages: [{ role: 'user', content: 'hi' }], tools: [calculator] }),
      batchLine('gated', { model: 'scripted', messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 'random_number' } }] }),
    ]);
    const batch = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(batch.status).toBe('failed');
    expect(batch.errors!.data).toEqual([{ code: 'unsupported_parameter', line: 2, param: 'body.tools', message: expect.stringContaining('"random_number"') }]);
  });

  it('refuses to retry an OpenAI batch natively (409): its files are written once, so it is left as it ended', async () => {
    const input = await upload([batchLine('fails', { model: 'scripted', messages: [{ role: 'user', content: scripted({ error: { status: 400, message: 'no retry here' } }) }] })]);
    const created = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const events = await followBatchEvents(stack.url, apiKey, created.id);
    try {
      expect(await events.finished()).toMatchObject({ counts: { total: 1, failed: 1 } });
    } finally {
      events.close();
    }
    const ended = await client.batches.retrieve(created.id);
    const asked = () => stack.scripted.requests.filter((request) => JSON.stringify(request.body).includes('no retry here')).length;
    const askedBefore = asked();

    const retry = await fetch(`${stack.url}/v1/batches/${created.id}/retry`, { method: 'POST', headers: { authorization: `Bearer ${apiKey}` } });
    expect(retry.status).toBe(409);
    expect(await retry.json()).toEqual({ error: { code: 'conflict', message: expect.stringContaining('submit a new OpenAI batch') } });
    expect(await client.batches.retrieve(created.id)).toEqual(ended);
    const native = (await (await fetch(`${stack.url}/v1/batches/${created.id}`, { headers: { authorization: `Bearer ${apiKey}` } })).json()) as any;
    expect(native).toMatchObject({ status: 'completed', counts: { failed: 1, queued: 0, running: 0 } });
    expect(asked()).toBe(askedBefore);
  });

  it('keeps the results of the items that ended when a batch is cancelled (partial results)', async () => {
    const quick = [0, 1].map((n) => batchLine(`quick-${n}`, { model: 'scripted', messages: [{ role: 'user', content: scripted({ text: `Quick ${n}.` }) }] }));
    const slow = Array.from({ length: 12 }, (_, n) =>
      batchLine(`slow-${n}`, { model: 'scripted', messages: [{ role: 'user', content: scripted({ tokens: 3000, tokenDelayMs: 20 }) }] }),
    );
    const input = await upload([...quick, ...slow]);
    const created = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    const events = await followBatchEvents(stack.url, apiKey, created.id);
    try {
      await events.waitFor((frame) => frame.type === 'batch-progress' && frame.counts.succeeded === 2);
      expect((await client.batches.cancel(created.id)).status).toMatch(/^(cancelling|cancelled|finalizing)$/);
      await events.finished();
    } finally {
      events.close();
    }
    const batch = await client.batches.retrieve(created.id);
    expect(batch).toMatchObject({ status: 'cancelled', request_counts: { total: 14, completed: 2 } });
    expect((await fileLines(batch.output_file_id!)).map((line) => [line.custom_id, line.response.body.choices[0].message.content])).toEqual([
      ['quick-0', 'Quick 0.'],
      ['quick-1', 'Quick 1.'],
    ]);
    const errors = await fileLines(batch.error_file_id!);
    expect(errors).toHaveLength(12);
    for (const line of errors) expect(line).toMatchObject({ custom_id: expect.stringMatching(/^slow-/), response: null, error: { code: 'batch_cancelled' } });
  }, 60_000);

  it("fails a batch whose file has bad lines, naming each; answers 404 for a file that is not the user's", async () => {
    const input = await upload([
      batchLine('ok', { model: 'scripted', messages: [{ role: 'user', content: 'hi' }] }),
      '{"custom_id": "bad", "method": "GET", "url": "/v1/chat/completions", "body": {}}',
      'not json',
    ]);
    const batch = await client.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(batch.status).toBe('failed');
    expect(batch.errors!.data!.map((error) => error.line)).toEqual(expect.arrayContaining([2, 3]));
    expect(await client.batches.retrieve(batch.id)).toMatchObject({ status: 'failed' });

    const stranger = openAiClient(stack.url, (await stack.createUser('stranger')).apiKey);
    await expect(stranger.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(stranger.batches.retrieve(batch.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it('stores a batch and its OpenAI record together: a record that cannot be stored leaves no batch to run', async () => {
    const owner = await stack.createUser('openai-batches-atomic');
    const ownClient = openAiClient(stack.url, owner.apiKey);
    const input = await ownClient.files.create({
      file: await toFile(Buffer.from(`${batchLine('one', { model: 'scripted', messages: [{ role: 'user', content: 'hi' }] })}\n`), 'batch.jsonl'),
      purpose: 'batch',
    });
    await withInsertsRefused(stack.config, 'openai_batches', owner.id, async (db) => {
      await expect(ownClient.batches.create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' })).rejects.toBeInstanceOf(
        OpenAI.InternalServerError,
      );
      const { rows } = await db.query('SELECT count(*)::int AS batches FROM batches WHERE user_id = $1', [owner.id]);
      expect(rows[0]).toEqual({ batches: 0 });
    });
    expect((await ownClient.batches.list()).data).toEqual([]);
  });

  it('`npm run cli -- batch run` takes an OpenAI-format file too', async () => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'openai-cli-'));
    try {
      const items = path.join(dir, 'openai.jsonl');
      const out = path.join(dir, 'results.jsonl');
      await writeFile(items, [0, 1, 2].map((n) => batchLine(`req-${n}`, { model: 'scripted', messages: [{ role: 'user', content: scripted({ text: `CLI ${n}.` }) }] })).join('\n'));
      const run = await runToExit('workers/cli.ts', {}, ['batch', 'run', items, '--out', out, '--url', stack.url, '--key', apiKey]);
      expect(run.stderr).toMatch(/completed: 3 succeeded, 0 failed, 0 cancelled of 3/);
      expect(run.code).toBe(0);
      const lines = (await readFile(out, 'utf8'))
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(lines.map((line) => [line.customId, line.status, line.text]).sort()).toEqual([0, 1, 2].map((n) => [`req-${n}`, 'succeeded', `CLI ${n}.`]));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
