import OpenAI from 'openai';
import { apiClient } from '../../support/http';
import { openAiClient } from '../../support/openai-sdk';
import { poll } from '../../support/poll';
import { scripted } from '../../support/scripted';
import { startTestStack, type TestStack } from '../../support/stack';

const tools: OpenAI.Responses.Tool[] = [{ type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } }, strict: false }];
const asksForWeather = scripted({ steps: [{ toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] }, { text: 'It is sunny.' }] });

/**
 * Responses whose input pairs function calls and outputs wrongly (docs/RELIABILITY.md, case 45):
 * refused with a 400 naming the call_id and nothing stored, as OpenAI refuses them, so the
 * conversation is never one on which every later response fails; and the stored history of one
 * that answered a call is edited, regenerated and forked only into histories the model takes.
 */
describe('function calls and their outputs in Responses input', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startTestStack({ workers: 1 });
  });
  afterAll(() => stack.close());

  async function user(name: string) {
    const owner = await stack.createUser(name);
    const count = async (table: 'turns' | 'conversations') =>
      (await stack.resources.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE user_id = $1`, [owner.id])).rows[0]!.n;
    return { client: openAiClient(stack.url, owner.apiKey), api: apiClient(stack.url, owner.apiKey), count };
  }

  async function refusal(client: OpenAI, request: OpenAI.Responses.ResponseCreateParamsNonStreaming): Promise<InstanceType<typeof OpenAI.APIError>> {
    const error = await client.responses.create(request).then(
      () => {
        throw new Error('expected a 400');
      },
      (thrown: unknown) => thrown as InstanceType<typeof OpenAI.APIError>,
    );
    expect(error).toBeInstanceOf(OpenAI.BadRequestError);
    expect(error.error).toMatchObject({ type: 'invalid_request_error', param: 'input', code: 'invalid_request' });
    return error;
  }

  it('refuses a function_call given without its output, storing nothing; the conversation goes on', async () => {
    const { client, count } = await user('pairs-unanswered');
    const given = { type: 'function_call' as const, call_id: 'call_given', name: 'get_weather', arguments: '{"city":"Oslo"}' };
    expect((await refusal(client, { input: [{ role: 'user', content: 'Weather?' }, given], tools })).message).toContain('no tool output found for function call call_given');
    // Its output after a later message does not answer it either: the provider takes outputs right after their calls.
    const late = [
      { role: 'user' as const, content: 'Weather?' },
      given,
      { role: 'user' as const, content: 'Well?' },
      { type: 'function_call_output' as const, call_id: 'call_given', output: '{}' },
    ];
    expect((await refusal(client, { input: late, tools })).message).toContain('call_given');
    expect([await count('conversations'), await count('turns')]).toEqual([0, 0]);

    const first = await client.responses.create({ input: scripted({ text: 'Pairs first.' }) });
    expect((await refusal(client, { previous_response_id: first.id, input: [given], tools })).message).toContain('call_given');
    expect(await count('turns')).toBe(1);
    // Given with its output, the same call is context the model takes.
    const paired = await client.responses.create({
      previous_response_id: first.id,
      input: [given, { type: 'function_call_output', call_id: 'call_given', output: '{"sky":"clear"}' }, { role: 'user', content: scripted({ text: 'Pairs next.' }) }],
      tools,
    });
    expect(paired).toMatchObject({ status: 'completed', output_text: 'Pairs next.' });
  });

  it("refuses outputs of the previous response's calls given after another message, or twice; answered first, it goes on", async () => {
    const { client, count } = await user('pairs-order');
    const asked = await client.responses.create({ input: asksForWeather, tools });
    const call = asked.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    const output = { type: 'function_call_output' as const, call_id: call.call_id, output: '{"sky":"sunny"}' };

    const late = await refusal(client, { previous_response_id: asked.id, input: [{ role: 'user', content: 'Anything?' }, output], tools });
    expect(late.message).toContain(`no tool output found for function call ${call.call_id}`);
    const twice = await refusal(client, { previous_response_id: asked.id, input: [output, output], tools });
    expect(twice.message).toContain(`function call ${call.call_id} has more than one function_call_output`);
    expect(await count('turns')).toBe(1);

    const answered = await client.responses.create({ previous_response_id: asked.id, input: [output], tools });
    expect(answered).toMatchObject({ status: 'completed', output_text: 'It is sunny.' });
  });

  it("refuses a /v1 turn while the caller's calls have no output (409 naming them), storing nothing; once answered, it runs", async () => {
    const { client, api, count } = await user('pairs-native-turn');
    const asked = await client.responses.create({ input: asksForWeather, tools });
    const call = asked.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    const [conversation] = (await api.get('/v1/conversations')).body.data;
    const path = (await api.get(`/v1/conversations/${conversation.id}`)).body.messages;

    const refused = await api.post(`/v1/conversations/${conversation.id}/turns`, { content: 'Hello?' });
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({ code: 'conflict', details: { toolCallIds: [call.call_id] }, message: expect.stringContaining(call.call_id) });
    expect(await count('turns')).toBe(1);
    expect((await api.get(`/v1/conversations/${conversation.id}`)).body.messages).toEqual(path);

    await client.responses.create({ previous_response_id: asked.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"sky":"sunny"}' }], tools });
    const next = await api.post(`/v1/conversations/${conversation.id}/turns`, { content: scripted({ text: 'Native next.' }) });
    expect(next.status).toBe(202);
    let turn: any;
    await poll('the turn did not end', async () => ['completed', 'failed', 'cancelled'].includes((turn = (await api.get(`/v1/turns/${next.body.turnId}`)).body).status));
    expect(turn).toMatchObject({ status: 'completed' });
  });

  it('refuses an edit of the input that answered a call, and a fork that leaves the call without its output; regenerates and forks it whole', async () => {
    const { client, api } = await user('pairs-branches');
    const asked = await client.responses.create({ input: asksForWeather, tools });
    const call = asked.output[0] as OpenAI.Responses.ResponseFunctionToolCall;
    const [conversation] = (await api.get('/v1/conversations')).body.data;
    const [, asking] = (await api.get(`/v1/conversations/${conversation.id}`)).body.messages;

    // Until its output comes, the call has no result: a fork there would be a conversation no turn could run on.
    const fork = await api.post(`/v1/conversations/${conversation.id}/fork`, { messageId: asking.id });
    expect([fork.status, fork.body.error.code]).toEqual([409, 'conflict']);
    expect(fork.body.error.message).toContain(call.call_id);

    await client.responses.create({ previous_response_id: asked.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: '{"sky":"sunny"}' }], tools });
    const path = (await api.get(`/v1/conversations/${conversation.id}`)).body.messages;
    expect(path.map((message: any) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    const answering = path[2];

    const edit = await api.post(`/v1/conversations/${conversation.id}/turns`, { content: 'Never mind.', fromMessageId: answering.id });
    expect(edit.status).toBe(400);
    expect(edit.body.error).toMatchObject({
      code: 'invalid_request',
      details: [{ field: 'fromMessageId', message: expect.stringContaining(`the tool calls ${call.call_id} of ${asking.id} have no results`) }],
    });
    expect((await api.get(`/v1/conversations/${conversation.id}`)).body.messages).toEqual(path);

    const regenerate = await api.post(`/v1/conversations/${conversation.id}/turns`, { regenerate: true });
    expect(regenerate.status).toBe(202);
    let turn: any;
    await poll('the regenerate did not end', async () =>
      ['completed', 'failed', 'cancelled'].includes((turn = (await api.get(`/v1/turns/${regenerate.body.turnId}`)).body).status),
    );
    expect(turn).toMatchObject({ status: 'completed' });
    const sent = stack.scripted.requests.filter((request: any) => JSON.stringify(request.body.messages).includes('"sky\\":\\"sunny')).at(-1)!.body as any;
    expect(sent.messages.map((message: any) => message.role)).toEqual(['user', 'assistant', 'tool']);

    // The outputs came in the next input: a fork at the call still leaves them out, one at that input holds them.
    expect((await api.post(`/v1/conversations/${conversation.id}/fork`, { messageId: asking.id })).status).toBe(409);
    const forked = await api.post(`/v1/conversations/${conversation.id}/fork`, { messageId: answering.id });
    expect(forked.status).toBe(201);
    const next = await api.post(`/v1/conversations/${forked.body.id}/turns`, { content: scripted({ text: 'Forked on.' }) });
    await poll("the fork's turn did not end", async () => ['completed', 'failed', 'cancelled'].includes((turn = (await api.get(`/v1/turns/${next.body.turnId}`)).body).status));
    expect(turn).toMatchObject({ status: 'completed' });
  });
});
