import OpenAI, { APIError } from 'openai';
import type { ChatCompletionChunk, ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { startScriptedModel, type ScriptedModel } from '../../../src/scripted-model/scripted-model-server';
import { scripted } from '../../support/scripted';
import { collect } from '../../support/collect';

const contentOf = (chunks: ChatCompletionChunk[]) => chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
const finishReasons = (chunks: ChatCompletionChunk[]) => chunks.flatMap((chunk) => chunk.choices.map((choice) => choice.finish_reason)).filter(Boolean);

describe('the scripted model over HTTP', () => {
  let model: ScriptedModel;
  let client: OpenAI;

  beforeAll(async () => {
    model = await startScriptedModel({ defaultTokenDelayMs: 0 });
    client = new OpenAI({ baseURL: model.url, apiKey: 'x', maxRetries: 0 });
  });
  afterAll(() => model.close());

  const stream = (messages: ChatCompletionMessageParam[], extra: Partial<OpenAI.Chat.ChatCompletionCreateParamsStreaming> = {}, headers?: Record<string, string>) =>
    client.chat.completions.create({ model: 'scripted', messages, stream: true, ...extra }, headers ? { headers } : undefined);

  it('streams text deltas that join back to the scenario text, after a role chunk', async () => {
    const text = 'Hello, wörld! 日本語 and 👩‍👩‍👧 — "quoted"\nnew line.';
    const chunks = await collect(await stream([{ role: 'user', content: `say it ${scripted({ text })}` }]));
    expect(chunks[0]!.choices[0]).toEqual({ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null, logprobs: null });
    expect(chunks[0]).toMatchObject({ object: 'chat.completion.chunk', model: 'scripted' });
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    expect(contentOf(chunks)).toBe(text);
    expect(finishReasons(chunks)).toEqual(['stop']);
  });

  it('streams parallel tool calls, interleaved and split at odd offsets, that reassemble by index with ids only first', async () => {
    const calls = [
      { name: 'weather', arguments: { city: 'São Paulo', note: 'a "quote" and \\u00e9' } },
      { name: 'calculator', arguments: { expression: '(2 + 3) * 4' }, id: 'given-id' },
    ];
    const chunks = await collect(
      await stream([{ role: 'user', content: scripted({ text: 'Checking.', toolCalls: calls, interleave: true, splitArgumentsAt: [1, 2, 9, 14, 15, 30] }) }]),
    );
    const fragments = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
    expect(fragments.slice(0, 4).map((fragment) => fragment.index)).toEqual([0, 1, 0, 1]);
    const assembled: { id?: string; name?: string; arguments: string; idsSeen: number }[] = [];
    for (const fragment of fragments) {
      const call = (assembled[fragment.index] ??= { arguments: '', idsSeen: 0 });
      if (fragment.id) {
        call.id = fragment.id;
        call.idsSeen++;
      }
      if (fragment.function?.name) call.name = fragment.function.name;
      call.arguments += fragment.function?.arguments ?? '';
    }
    expect(assembled).toEqual([
      { id: 'call_0', name: 'weather', arguments: JSON.stringify(calls[0]!.arguments), idsSeen: 1 },
      { id: 'given-id', name: 'calculator', arguments: JSON.stringify(calls[1]!.arguments), idsSeen: 1 },
    ]);
    expect(contentOf(chunks)).toBe('Checking.');
    expect(finishReasons(chunks)).toEqual(['tool_calls']);
  });

  it('sends usage in the last chunk when asked', async () => {
    const chunks = await collect(await stream([{ role: 'user', content: scripted({ tokens: 12 }) }], { stream_options: { include_usage: true } }));
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ completion_tokens: 12 });
    expect(last.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(last.usage!.total_tokens).toBe(last.usage!.prompt_tokens + 12);
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === null)).toBe(true);
  });

  it('answers a scripted 429 with Retry-After, which the SDK surfaces as an APIError', async () => {
    const failure = await stream([{ role: 'user', content: scripted({ error: { status: 429, retryAfterSeconds: 2 } }) }]).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(APIError);
    const error = failure as APIError;
    expect(error.status).toBe(429);
    expect(error.headers?.get('retry-after')).toBe('2');
    expect(error.error).toMatchObject({ type: 'rate_limit_error', message: expect.stringContaining('429') });
  });

  it('drops the connection after cutAfterTokens, so that iteration throws after those tokens', async () => {
    const seen: string[] = [];
    const iterate = async () => {
      for await (const chunk of await stream([{ role: 'user', content: scripted({ tokens: 50, cutAfterTokens: 3 }) }])) {
        seen.push(chunk.choices[0]?.delta.content ?? '');
      }
    };
    await expect(iterate()).rejects.toThrow();
    expect(seen.join('')).toBe('lorem ipsum dolor');
  });

  it('ends normally but without any finish_reason when told to', async () => {
    const chunks = await collect(await stream([{ role: 'user', content: scripted({ text: 'no finish', omitFinishReason: true }) }], { stream_options: { include_usage: true } }));
    expect(contentOf(chunks)).toBe('no finish');
    expect(finishReasons(chunks)).toEqual([]);
    expect(chunks.at(-1)!.usage).toMatchObject({ completion_tokens: 2 });
  });

  it('sends an error event inside a 200 stream, which the SDK throws', async () => {
    const seen: string[] = [];
    const iterate = async () => {
      for await (const chunk of await stream([{ role: 'user', content: scripted({ text: 'one two three', errorEventAfterTokens: 2 }) }])) {
        seen.push(chunk.choices[0]?.delta.content ?? '');
      }
    };
    await expect(iterate()).rejects.toThrow(/failed after 2 tokens/);
    expect(seen.join('')).toBe('one two');
  });

  it('fails the same request twice and then answers, with attempts', async () => {
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: scripted({ attempts: [{ error: { status: 503 } }, { error: { status: 503 } }, { text: 'ok' }] }) }];
    const statuses: number[] = [];
    for (let i = 0; i < 2; i++) {
      const error = await stream(messages).catch((thrown: unknown) => thrown);
      statuses.push((error as APIError).status as number);
    }
    expect(statuses).toEqual([503, 503]);
    expect(contentOf(await collect(await stream(messages)))).toBe('ok');
    expect(contentOf(await collect(await stream(messages)))).toBe('ok');
  });

  it('walks the steps of a scenario across tool rounds, then answers by default', async () => {
    const scenario = { steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '2+2' } }] }, { text: 'It is 4.' }] };
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: scripted(scenario) }];
    const first = await collect(await stream(messages));
    const call = first.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? [])[0]!;
    messages.push(
      { role: 'assistant', content: null, tool_calls: [{ id: call.id!, type: 'function', function: { name: 'calculator', arguments: '{"expression":"2+2"}' } }] },
      { role: 'tool', tool_call_id: call.id!, content: '4' },
    );
    expect(contentOf(await collect(await stream(messages)))).toBe('It is 4.');
    messages.push({ role: 'assistant', content: 'It is 4.' }, { role: 'user', content: 'thanks' });
    expect(contentOf(await collect(await stream(messages)))).toMatch(/^You said: "thanks"/);
  });

  it('takes a scenario from the x-scripted-scenario header and records the request', async () => {
    const marker = `header-${Date.now()}`;
    const chunks = await collect(await stream([{ role: 'user', content: marker }], {}, { 'x-scripted-scenario': JSON.stringify({ text: 'from the header' }) }));
    expect(contentOf(chunks)).toBe('from the header');
    const recorded = await model.waitForRequest((request) => JSON.stringify(request.body).includes(marker));
    expect(recorded).toMatchObject({ method: 'POST', path: '/v1/chat/completions', body: { model: 'scripted', stream: true } });
    expect(recorded.headers['x-scripted-scenario']).toBe('{"text":"from the header"}');
    expect(model.requests.at(-1)).toBe(recorded);
  });

  it('calls the offered tools when asked to use tools, then summarises their results', async () => {
    const tools: OpenAI.Chat.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'calculator', parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] } } },
      { type: 'function', function: { name: 'current_time', parameters: { type: 'object', properties: {} } } },
    ];
    const messages: ChatCompletionMessageParam[] = [{ role: 'user', content: 'Please use tools.' }];
    const chunks = await collect(await stream(messages, { tools }));
    const firsts = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []).filter((fragment) => fragment.id);
    expect(firsts.map((fragment) => [fragment.id, fragment.function?.name])).toEqual([
      ['call_0', 'calculator'],
      ['call_1', 'current_time'],
    ]);
    messages.push(
      {
        role: 'assistant',
        content: null,
        tool_calls: firsts.map((fragment) => ({ id: fragment.id!, type: 'function' as const, function: { name: fragment.function!.name!, arguments: '{}' } })),
      },
      { role: 'tool', tool_call_id: 'call_0', content: '{"result":4}' },
      { role: 'tool', tool_call_id: 'call_1', content: '12:00' },
    );
    expect(contentOf(await collect(await stream(messages, { tools })))).toBe('Tool results: calculator → {"result":4}; current_time → 12:00');
  });

  it('answers without streaming as a chat.completion', async () => {
    const completion = await client.chat.completions.create({
      model: 'scripted',
      messages: [{ role: 'user', content: scripted({ text: 'whole answer', toolCalls: [{ name: 'f', arguments: { a: 1 } }] }) }],
    });
    expect(completion.object).toBe('chat.completion');
    expect(completion.choices[0]).toMatchObject({
      index: 0,
      finish_reason: 'tool_calls',
      message: { role: 'assistant', content: 'whole answer', tool_calls: [{ id: 'call_0', type: 'function', function: { name: 'f', arguments: '{"a":1}' } }] },
    });
    expect(completion.usage).toMatchObject({ completion_tokens: 4 });
  });

  it('lists its model', async () => {
    const models = await client.models.list();
    expect(models.data).toEqual([{ id: 'scripted', object: 'model', created: expect.any(Number), owned_by: 'switchyard' }]);
  });

  it('rejects an orphaned tool call with a 400 naming the id, and still records the request', async () => {
    const failure = await stream([
      { role: 'user', content: 'hi' },
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_orphan', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'user', content: 'where is the result?' },
    ]).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(APIError);
    expect((failure as APIError).status).toBe(400);
    expect((failure as APIError).message).toContain('did not have response messages: call_orphan');
    expect((failure as APIError).error).toMatchObject({ type: 'invalid_request_error', param: 'messages.[1].role', code: null });
    await model.waitForRequest((request) => JSON.stringify(request.body).includes('call_orphan'), 1000);
  });

  it('says what is wrong with a bad scenario, malformed JSON and an unknown route', async () => {
    const failure = await stream([{ role: 'user', content: scripted({ text: 'x', tokenz: 3 }) }]).catch((error: unknown) => error);
    expect((failure as APIError).status).toBe(400);
    expect((failure as APIError).message).toContain('The scripted scenario in messages[0] is invalid: Unrecognized key: "tokenz"');

    const malformed = await fetch(`${model.url}/chat/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"model": ' });
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { error: unknown }).error).toMatchObject({
      type: 'invalid_request_error',
      message: expect.stringContaining('could not parse the JSON body'),
    });

    const unknown = await fetch(`${model.url}/embeddings`, { method: 'POST' });
    expect(unknown.status).toBe(404);
    expect((await unknown.json()) as unknown).toEqual({ error: { message: 'Invalid URL (POST /v1/embeddings)', type: 'invalid_request_error', param: null, code: null } });
  });

  it('streams 5,000 tokens without delays in full', async () => {
    const chunks = await collect(await stream([{ role: 'user', content: scripted({ tokens: 5000 }) }], { stream_options: { include_usage: true } }));
    expect(chunks.at(-1)!.usage!.completion_tokens).toBe(5000);
    expect(contentOf(chunks).split(' ')).toHaveLength(5000);
  });

  it('keeps serving after a client aborts mid-stream', async () => {
    const controller = new AbortController();
    const aborted = await client.chat.completions.create(
      { model: 'scripted', messages: [{ role: 'user', content: scripted({ tokens: 10_000, tokenDelayMs: 5 }) }], stream: true },
      { signal: controller.signal },
    );
    let received = 0;
    // The SDK ends the iteration quietly on its own abort; chunks that had already arrived with the
    // first read may still be yielded, so only "far short of the whole answer" is certain.
    for await (const chunk of aborted) {
      if (chunk.choices[0]?.delta.content) received++;
      controller.abort();
    }
    expect(received).toBeGreaterThanOrEqual(1);
    expect(received).toBeLessThan(10_000);
    expect(contentOf(await collect(await stream([{ role: 'user', content: scripted({ text: 'still here' }) }])))).toBe('still here');
  });
});

describe('closing the scripted model', () => {
  it('resolves while a stalled stream is open, and the stalled client fails', async () => {
    const model = await startScriptedModel();
    const client = new OpenAI({ baseURL: model.url, apiKey: 'x', maxRetries: 0 });
    const stalled = await client.chat.completions.create({
      model: 'scripted',
      messages: [{ role: 'user', content: scripted({ tokens: 10, stallAfterTokens: 2 }) }],
      stream: true,
    });
    const seen: string[] = [];
    const iteration = (async () => {
      for await (const chunk of stalled) {
        seen.push(chunk.choices[0]?.delta.content ?? '');
        if (seen.join('') === 'lorem ipsum') void model.close();
      }
    })();
    await expect(iteration).rejects.toThrow();
    await model.close();
    expect(seen.join('')).toBe('lorem ipsum');
    await expect(model.waitForRequest(() => false)).rejects.toThrow('closed');
  });

  it('resolves while a stream stalled right after its headers is open', async () => {
    const model = await startScriptedModel();
    const client = new OpenAI({ baseURL: model.url, apiKey: 'x', maxRetries: 0 });
    const stalled = await client.chat.completions.create({
      model: 'scripted',
      messages: [{ role: 'user', content: scripted({ stallAfterTokens: 0, text: 'never sent' }) }],
      stream: true,
    });
    const iteration = expect(collect(stalled)).rejects.toThrow();
    await model.close();
    await iteration;
  });
});
