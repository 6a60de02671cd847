import OpenAI from 'openai';
import { apiClient } from '../../support/http';
import { openAiClient } from '../../support/openai-sdk';
import { scripted } from '../../support/scripted';
import { startTestStack, type TestStack } from '../../support/stack';

/** The history the model was sent for the request whose last message is `last`. */
function historySentWith(stack: TestStack, last: string): [string, unknown][] {
  const request = stack.scripted.requests.filter((entry: any) => JSON.stringify(entry.body.messages.at(-1)).includes(last)).at(-1);
  return (request!.body as any).messages.map((message: any) => [message.role, message.content]);
}

/** OpenAI's Conversations API through OpenAI's SDK (docs/API.md, "OpenAI-compatible routes"). */
describe('OpenAI-compatible conversations', () => {
  let stack: TestStack;
  let client: OpenAI;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    stack = await startTestStack({ workers: 1 });
    const owner = await stack.createUser('conversations');
    client = openAiClient(stack.url, owner.apiKey);
    api = apiClient(stack.url, owner.apiKey);
  });
  afterAll(() => stack.close());

  it('creates, retrieves, updates and deletes a conversation, which is the /v1 conversation of the same id', async () => {
    const created = await client.conversations.create({ metadata: { topic: 'demo' } });
    expect(created).toEqual({ id: expect.stringMatching(/^conv_/), object: 'conversation', created_at: expect.any(Number), metadata: { topic: 'demo' } });
    expect(await client.conversations.retrieve(created.id)).toEqual(created);
    expect((await api.get(`/v1/conversations/${created.id}`)).body).toMatchObject({ id: created.id, metadata: { topic: 'demo' }, messages: [] });

    const updated = await client.conversations.update(created.id, { metadata: { topic: 'changed', more: 'yes' } });
    expect(updated).toEqual({ ...created, metadata: { topic: 'changed', more: 'yes' } });
    expect(await client.conversations.retrieve(created.id)).toEqual(updated);

    expect(await client.conversations.delete(created.id)).toEqual({ id: created.id, object: 'conversation.deleted', deleted: true });
    await expect(client.conversations.retrieve(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect((await api.get(`/v1/conversations/${created.id}`)).status).toBe(404);
    await expect(client.conversations.delete(created.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
  });

  it("answers responses within a conversation: the second sees the first's history, and items lists them all", async () => {
    const conversation = await client.conversations.create({
      items: [
        { type: 'message', role: 'developer', content: 'Answer in one line.' },
        { type: 'message', role: 'user', content: 'My name is Ada.' },
        { type: 'message', role: 'assistant', content: 'Hello Ada.' },
      ],
    });
    const first = await client.responses.create({ conversation: conversation.id, input: scripted({ text: 'First in the conversation.' }) });
    expect(first).toMatchObject({ status: 'completed', output_text: 'First in the conversation.', conversation: { id: conversation.id }, previous_response_id: null });
    const second = await client.responses.create({ conversation: { id: conversation.id }, input: scripted({ text: 'Second in the conversation.' }) });
    expect(second).toMatchObject({ status: 'completed', output_text: 'Second in the conversation.', conversation: { id: conversation.id } });

    expect(historySentWith(stack, 'Second in the conversation.')).toEqual([
      ['system', expect.stringContaining('Answer in one line.')],
      ['user', 'My name is Ada.'],
      ['assistant', 'Hello Ada.'],
      ['user', scripted({ text: 'First in the conversation.' })],
      ['assistant', 'First in the conversation.'],
      ['user', scripted({ text: 'Second in the conversation.' })],
    ]);

    const items = await client.conversations.items.list(conversation.id, { order: 'asc' });
    const shown = items.data.map((item: any) => [item.type, item.role, item.content?.[0]?.text]);
    expect(shown).toEqual([
      ['message', 'user', 'My name is Ada.'],
      ['message', 'assistant', 'Hello Ada.'],
      ['message', 'user', scripted({ text: 'First in the conversation.' })],
      ['message', 'assistant', 'First in the conversation.'],
      ['message', 'user', scripted({ text: 'Second in the conversation.' })],
      ['message', 'assistant', 'Second in the conversation.'],
    ]);
    // A response's output item is the same item in its conversation.
    expect(items.data[5]!.id).toBe(second.output[0]!.id);

    // Newest first unless told, paged with `after` as the SDK's iterator pages.
    const newest = await client.conversations.items.list(conversation.id, { limit: 2 });
    expect(newest.data.map((item) => item.id)).toEqual([items.data[5]!.id, items.data[4]!.id]);
    expect(newest.has_more).toBe(true);
    const all: string[] = [];
    for await (const item of client.conversations.items.list(conversation.id, { limit: 4 })) all.push(item.id!);
    expect(all).toEqual(items.data.map((item) => item.id).reverse());
  });

  it('takes items ending with function calls, answered by the first response in the conversation', async () => {
    const conversation = await client.conversations.create({
      items: [
        { type: 'message', role: 'user', content: 'Weather in Oslo?' },
        { type: 'function_call', call_id: 'call_oslo', name: 'get_weather', arguments: '{"city":"Oslo"}' },
      ],
    });
    // A /v1 turn would follow a call with no output.
    const refused = await api.post(`/v1/conversations/${conversation.id}/turns`, { content: 'Hello?' });
    expect([refused.status, refused.body.error.details]).toEqual([409, { toolCallIds: ['call_oslo'] }]);
    // So would a response whose input does not answer it: a 400 naming it, as OpenAI's.
    await expect(client.responses.create({ conversation: conversation.id, input: 'Hello?' })).rejects.toMatchObject({ status: 400, message: expect.stringContaining('call_oslo') });

    const answered = await client.responses.create({
      conversation: conversation.id,
      input: [
        { type: 'function_call_output', call_id: 'call_oslo', output: 'Sunny' },
        { role: 'user', content: scripted({ text: 'It is sunny in Oslo.' }) },
      ],
    });
    expect(answered.output_text).toBe('It is sunny in Oslo.');
    const items = await client.conversations.items.list(conversation.id, { order: 'asc' });
    expect(items.data.map((item) => item.type)).toEqual(['message', 'function_call', 'function_call_output', 'message', 'message']);
  });

  it('refuses an output that answers no call in items, a conversation with previous_response_id, and one that is not the caller’s', async () => {
    await expect(client.conversations.create({ items: [{ type: 'function_call_output', call_id: 'call_none', output: 'x' }] })).rejects.toMatchObject({
      status: 400,
      message: expect.stringContaining('call_none'),
    });
    const conversation = await client.conversations.create({});
    const first = await client.responses.create({ input: scripted({ text: 'Alone.' }) });
    await expect(client.responses.create({ conversation: conversation.id, previous_response_id: first.id, input: 'x' })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    const stranger = openAiClient(stack.url, (await stack.createUser('conversations-stranger')).apiKey);
    await expect(stranger.conversations.retrieve(conversation.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(stranger.responses.create({ conversation: conversation.id, input: 'x' })).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(stranger.conversations.delete(conversation.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect(await client.conversations.retrieve(conversation.id)).toMatchObject({ id: conversation.id });
  });

  it('refuses to delete a conversation while a response runs in it (409)', async () => {
    const conversation = await client.conversations.create({});
    const running = await client.responses.create({ conversation: conversation.id, input: scripted({ tokens: 2000, tokenDelayMs: 20 }), background: true });
    await expect(client.conversations.delete(conversation.id)).rejects.toBeInstanceOf(OpenAI.ConflictError);
    await client.responses.cancel(running.id);
    expect(await client.conversations.delete(conversation.id)).toMatchObject({ deleted: true });
  });

  it("lists a response's input items, and a deleted response is not found while its conversation keeps its items", async () => {
    const conversation = await client.conversations.create({});
    const response = await client.responses.create({
      conversation: conversation.id,
      instructions: 'Be brief.',
      input: [
        { role: 'user', content: 'Earlier question.' },
        { role: 'assistant', content: 'Earlier answer.' },
        { role: 'user', content: [{ type: 'input_text', text: scripted({ text: 'Now answered.' }) }] },
      ],
    });
    const asc = await client.responses.inputItems.list(response.id, { order: 'asc' });
    expect(asc.data.map((item: any) => [item.type, item.role, item.content[0].text])).toEqual([
      ['message', 'user', 'Earlier question.'],
      ['message', 'assistant', 'Earlier answer.'],
      ['message', 'user', scripted({ text: 'Now answered.' })],
    ]);
    const ids = asc.data.map((item) => item.id);
    const paged: string[] = [];
    for await (const item of client.responses.inputItems.list(response.id, { limit: 1 })) paged.push(item.id!);
    expect(paged).toEqual([...ids].reverse());

    expect(await client.responses.delete(response.id)).toMatchObject({ id: response.id, deleted: true });
    await expect(client.responses.retrieve(response.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(client.responses.inputItems.list(response.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    const items = await client.conversations.items.list(conversation.id, { order: 'asc' });
    expect(items.data.map((item: any) => item.content[0].text)).toEqual(['Earlier question.', 'Earlier answer.', scripted({ text: 'Now answered.' }), 'Now answered.']);
  });
});
