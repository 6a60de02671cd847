import OpenAI from 'openai';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { generateText, streamText, jsonSchema, tool } from 'ai';
import { openAiClient } from '../../support/openai-sdk';
import { markedScripted, scripted } from '../../support/scripted';
import { startTestStack, type TestStack } from '../../support/stack';

const adds = { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] };

/** Chat Completions through OpenAI's SDK and the AI SDK's providers (docs/API.md, "OpenAI-compatible routes"). */
describe('OpenAI-compatible chat completions', () => {
  let stack: TestStack;
  let client: OpenAI;
  let apiKey: string;

  beforeAll(async () => {
    stack = await startTestStack({ workers: 1 });
    apiKey = (await stack.createUser('chat-completions')).apiKey;
    client = openAiClient(stack.url, apiKey);
  });
  afterAll(() => stack.close());

  /** The request the scripted model received with this marker. */
  const providerRequest = (marker: string) => stack.scripted.requests.filter((request) => JSON.stringify(request.body).includes(marker));

  it('answers a chat.completion as a turn of a new conversation, found from its chatcmpl id', async () => {
    const completion = await client.chat.completions.create({
      model: 'scripted',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: scripted({ text: 'Hello from chat.' }) },
      ],
    });
    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: 'scripted',
      choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Hello from chat.' } }],
    });
    expect(completion.id).toMatch(/^chatcmpl-[0-9a-f]{32}$/);
    expect(completion.usage!.completion_tokens).toBeGreaterThan(0);
    const { switchyard } = completion as unknown as { switchyard: { turnId: string; conversationId: string } };
    const turn = await fetch(`${stack.url}/v1/turns/${completion.id}`, { headers: { authorization: `Bearer ${apiKey}` } });
    expect(turn.status).toBe(200);
    expect(await turn.json()).toMatchObject({ id: switchyard.turnId, conversationId: switchyard.conversationId, status: 'completed' });
  });

  it('streams chat.completion.chunks, a usage chunk with include_usage, then [DONE]', async () => {
    const stream = await client.chat.completions.create({
      model: 'scripted',
      messages: [{ role: 'user', content: scripted({ text: 'One two three.' }) }],
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks: OpenAI.Chat.ChatCompletionChunk[] = [];
    for await (const chunk of stream) chunks.push(chunk);
    expect(chunks.every((chunk) => chunk.object === 'chat.completion.chunk' && chunk.id === chunks[0]!.id)).toBe(true);
    expect(chunks[0]!.choices[0]!.delta.role).toBe('assistant');
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('One two three.');
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.at(-1)).toMatchObject({ choices: [], usage: { completion_tokens: expect.any(Number), total_tokens: expect.any(Number) } });
    // The raw stream ends with [DONE].
    const raw = await fetch(`${stack.url}/openai/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'scripted', messages: [{ role: 'user', content: scripted({ text: 'Done.' }) }], stream: true }),
    });
    expect((await raw.text()).trimEnd().endsWith('data: [DONE]')).toBe(true);
  });

  it("runs Switchyard's tools server-side and ends with the caller's functions as tool_calls", async () => {
    const server = await client.chat.completions.create({
      model: 'scripted',
      messages: [{ role: 'user', content: scripted({ steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '2+3' } }] }, { text: 'Five.' }] }) }],
      tools: [{ type: 'function', function: { name: 'calculator' } } as unknown as OpenAI.Chat.ChatCompletionTool],
    });
    expect(server.choices[0]).toMatchObject({ finish_reason: 'stop', message: { content: 'Five.' } });
    expect((server as unknown as { switchyard: { toolCalls: unknown[] } }).switchyard.toolCalls).toEqual([
      expect.objectContaining({ toolName: 'calculator', args: { expression: '2+3' }, result: expect.anything() }),
    ]);

    const own = await client.chat.completions.create({
      model: 'scripted',
      messages: [{ role: 'user', content: scripted({ toolCalls: [{ name: 'calculator', arguments: { a: 2, b: 3 } }] }) }],
      tools: [{ type: 'function', function: { name: 'calculator', parameters: adds } }],
    });
    expect(own.choices[0]!.finish_reason).toBe('tool_calls');
    const call = own.choices[0]!.message.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
    expect(call.function).toEqual({ name: 'calculator', arguments: JSON.stringify({ a: 2, b: 3 }) });

    // Streamed, the caller's call arrives as tool_calls deltas the SDK's helper assembles.
    const runner = client.chat.completions.stream({
      model: 'scripted',
      messages: [{ role: 'user', content: scripted({ toolCalls: [{ name: 'calculator', arguments: { a: 4, b: 5 } }] }) }],
      tools: [{ type: 'function', function: { name: 'calculator', parameters: adds } }],
    });
    const final = await runner.finalChatCompletion();
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
    expect((final.choices[0]!.message.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall).function).toEqual({
      name: 'calculator',
      arguments: JSON.stringify({ a: 4, b: 5 }),
    });

    // The caller answers its call with the messages whole.
    const answered = await client.chat.completions.create({
      model: 'scripted',
      messages: [
        { role: 'user', content: 'add' },
        { role: 'assistant', content: null, tool_calls: [call] },
        { role: 'tool', tool_call_id: call.id, content: '5' },
      ],
      tools: [{ type: 'function', function: { name: 'calculator', parameters: adds } }],
    });
    expect(answered.choices[0]!.finish_reason).toBe('stop');
  });

  it("refuses what it cannot honour, and a request mixing Switchyard's tools with the caller's functions", async () => {
    const refused = async (body: Record<string, unknown>) => {
      const error = await client.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: 'hi' }], ...body } as never).then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      return (error as InstanceType<typeof OpenAI.BadRequestError>).error as { code: string; param: string };
    };
    expect(await refused({ n: 2 })).toMatchObject({ code: 'unsupported_parameter', param: 'n' });
    expect(await refused({ logprobs: true })).toMatchObject({ code: 'unsupported_parameter', param: 'logprobs' });
    expect(await refused({ audio: { voice: 'alloy', format: 'mp3' }, modalities: ['text', 'audio'] })).toMatchObject({ code: 'unsupported_parameter' });
    expect(
      await refused({
        tools: [
          { type: 'function', function: { name: 'calculator' } },
          { type: 'function', function: { name: 'adder', parameters: adds } },
        ],
      }),
    ).toMatchObject({ code: 'unsupported_parameter', param: 'tools' });
  });

  it('sends the settings to the provider on every step of the turn', async () => {
    const marker = `settings-${Date.now()}`;
    await client.chat.completions.create({
      model: 'scripted',
      messages: [{ role: 'user', content: markedScripted({ steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] }, { text: 'Two.' }] }, marker) }],
      tools: [{ type: 'function', function: { name: 'calculator' } } as unknown as OpenAI.Chat.ChatCompletionTool],
      temperature: 0.3,
      top_p: 0.9,
      max_completion_tokens: 77,
      stop: ['END'],
      seed: 7,
      presence_penalty: 0.1,
      frequency_penalty: 0.2,
      parallel_tool_calls: false,
    });
    const requests = providerRequest(marker);
    expect(requests).toHaveLength(2);
    for (const request of requests) {
      expect(request.body).toMatchObject({
        temperature: 0.3,
        top_p: 0.9,
        max_tokens: 77,
        stop: ['END'],
        seed: 7,
        presence_penalty: 0.1,
        frequency_penalty: 0.2,
        parallel_tool_calls: false,
      });
    }
  });

  it("works under the AI SDK's openai.chat() and @ai-sdk/openai-compatible", async () => {
    const openai = createOpenAI({ baseURL: `${stack.url}/openai/v1`, apiKey });
    const generated = await generateText({ model: openai.chat('scripted'), prompt: scripted({ text: 'Through the AI SDK.' }) });
    expect(generated.text).toBe('Through the AI SDK.');
    const streamed = streamText({ model: openai.chat('scripted'), prompt: scripted({ text: 'Streamed through it.' }) });
    expect(await streamed.text).toBe('Streamed through it.');
    const withTool = await generateText({
      model: openai.chat('scripted'),
      prompt: scripted({ toolCalls: [{ name: 'adder', arguments: { a: 1, b: 2 } }] }),
      tools: { adder: tool({ inputSchema: jsonSchema<{ a: number; b: number }>(adds as never) }) },
    });
    expect(withTool.finishReason).toBe('tool-calls');
    expect(withTool.toolCalls[0]).toMatchObject({ toolName: 'adder', input: { a: 1, b: 2 } });

    const compatible = createOpenAICompatible({ name: 'switchyard', baseURL: `${stack.url}/openai/v1`, apiKey, includeUsage: true });
    const viaCompatible = streamText({ model: compatible.chatModel('scripted'), prompt: scripted({ text: 'Compatible too.' }) });
    expect(await viaCompatible.text).toBe('Compatible too.');
    expect((await viaCompatible.usage).outputTokens).toBeGreaterThan(0);
  });

  it('lists the models and retrieves one', async () => {
    const models = [];
    for await (const model of client.models.list()) models.push(model);
    expect(models).toEqual(expect.arrayContaining([expect.objectContaining({ id: 'scripted', object: 'model', owned_by: 'switchyard', created: expect.any(Number) })]));
    expect(await client.models.retrieve('scripted')).toMatchObject({ id: 'scripted', object: 'model' });
    await expect(client.models.retrieve('no-such-model')).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });
});

describe('OpenAI-compatible responses.delete', () => {
  let stack: TestStack;
  let client: OpenAI;

  beforeAll(async () => {
    stack = await startTestStack({ workers: 1 });
    client = openAiClient(stack.url, (await stack.createUser('responses-delete')).apiKey);
  });
  afterAll(() => stack.close());

  it('deletes a response, which is then not found, while its conversation stays', async () => {
    const response = await client.responses.create({ model: 'scripted', input: scripted({ text: 'To be deleted.' }) });
    await client.responses.delete(response.id);
    await expect(client.responses.retrieve(response.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(client.responses.delete(response.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    // Another user's is not found either.
    const other = await client.responses.create({ model: 'scripted', input: scripted({ text: 'Mine.' }) });
    const stranger = openAiClient(stack.url, (await stack.createUser('responses-delete-other')).apiKey);
    await expect(stranger.responses.delete(other.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect((await client.responses.retrieve(other.id)).status).toBe('completed');
  });
});
