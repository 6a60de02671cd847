import OpenAI from 'openai';
import { accumulateResponse } from 'openai/lib/responses/ResponseAccumulator';
import { openAiClient } from '../../support/openai-sdk';
import { markedScripted, scripted } from '../../support/scripted';
import { withInsertsRefused } from '../../support/refused-inserts';
import { startTestStack, type TestStack } from '../../support/stack';
import { writeToolsDir } from '../../support/tool-servers';
import { collect } from '../../support/collect';

type StreamEvent = OpenAI.Responses.ResponseStreamEvent;

/** What the SDK's own accumulator makes of the events (it throws on an event that does not fit). */
function accumulated(events: StreamEvent[]): OpenAI.Responses.Response {
  let snapshot: OpenAI.Responses.Response | undefined;
  for (const event of events) snapshot = accumulateResponse(event, snapshot);
  return snapshot!;
}

/** Sequence numbers 0, 1, 2, … with nothing missing or repeated, ending with one terminal event. */
function expectValidStream(events: StreamEvent[], from = 0): void {
  expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => from + index));
  const terminal = events.filter((event) => ['response.completed', 'response.failed', 'response.incomplete'].includes(event.type));
  expect(terminal).toHaveLength(1);
  expect(events.at(-1)).toBe(terminal[0]);
}

/** The Responses API through OpenAI's SDK (docs/API.md, "OpenAI-compatible routes"). */
describe('OpenAI-compatible responses', () => {
  let stack: TestStack;
  let client: OpenAI;

  beforeAll(async () => {
    // A client tool, and a builtin whose calls wait for approval: what an OpenAI caller cannot have run.
    const toolsDir = await writeToolsDir({ 'client-tools.json': { tools: [{ kind: 'client', name: 'confirm', description: 'Asks the user', timeoutMs: 20_000 }] } });
    stack = await startTestStack({ workers: 1, env: { TOOLS_DIR: toolsDir, APPROVAL_REQUIRED_TOOLS: 'random_number' } });
    client = openAiClient(stack.url, (await stack.createUser('responses')).apiKey);
  });
  afterAll(() => stack.close());

  it('answers a foreground request once its turn has ended', async () => {
    const response = await client.responses.create({ model: 'scripted', input: scripted({ text: 'Hello from the turn.' }), instructions: 'Be brief.', metadata: { run: 'one' } });
    expect(response).toMatchObject({ object: 'response', status: 'completed', instructions: 'Be brief.', metadata: { run: 'one' }, background: false });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output_text).toBe('Hello from the turn.');
    expect(response.output).toEqual([
      expect.objectContaining({
        type: 'message',
        role: 'assistant',
        status: 'completed',
        content: [expect.objectContaining({ type: 'output_text', text: 'Hello from the turn.' })],
      }),
    ]);
    expect(response.usage!.output_tokens).toBeGreaterThan(0);
    expect(await client.responses.retrieve(response.id)).toMatchObject({ id: response.id, status: 'completed', output_text: 'Hello from the turn.' });
  });

  it('records a response and its turn together: a response that cannot be recorded leaves no turn to run', async () => {
    const owner = await stack.createUser('responses-atomic');
    const ownClient = openAiClient(stack.url, owner.apiKey);
    await withInsertsRefused(stack.config, 'openai_responses', owner.id, async (db) => {
      await expect(ownClient.responses.create({ model: 'scripted', input: scripted({ text: 'Never.' }), background: true })).rejects.toBeInstanceOf(OpenAI.InternalServerError);
      const { rows } = await db.query('SELECT count(*)::int AS turns FROM turns WHERE user_id = $1', [owner.id]);
      expect(rows[0]).toEqual({ turns: 0 });
    });
    expect(stack.scripted.requests.some((request) => JSON.stringify(request.body).includes('Never.'))).toBe(false);
  });

  it('streams events named by type, numbered from 0, that the SDK accumulates into the stored response', async () => {
    const stream = await client.responses.create({ input: scripted({ text: 'One two three four.' }), stream: true });
    const events = await collect(stream);
    expectValidStream(events);
    expect(events.slice(0, 3).map((event) => event.type)).toEqual(['response.created', 'response.queued', 'response.in_progress']);
    expect(events.map((event) => event.type)).toEqual(
      expect.arrayContaining([
        'response.output_item.added',
        'response.content_part.added',
        'response.output_text.delta',
        'response.output_text.done',
        'response.content_part.done',
        'response.output_item.done',
        'response.completed',
      ]),
    );
    const deltas = events.flatMap((event) => (event.type === 'response.output_text.delta' ? [event.delta] : []));
    expect(deltas.join('')).toBe('One two three four.');
    const completed = events.at(-1) as OpenAI.Responses.ResponseCompletedEvent;
    expect(accumulated(events).output).toEqual(completed.response.output);
    expect(await client.responses.retrieve(completed.response.id)).toMatchObject({ status: 'completed', output_text: 'One two three four.' });
  });

  it('runs in the background, and resumes the stream after any sequence_number with nothing lost or repeated', async () => {
    const background = await client.responses.create({ input: scripted({ tokens: 60, tokenDelayMs: 5 }), background: true });
    expect(background.background).toBe(true);
    expect(['queued', 'in_progress']).toContain(background.status);
    const all = await collect(await client.responses.retrieve(background.id, { stream: true }));
    expectValidStream(all);
    for (const after of [0, 5, Math.floor(all.length / 2), all.length - 2]) {
      const resumed = await collect(await client.responses.retrieve(background.id, { stream: true, starting_after: after }));
      expect(resumed).toEqual(all.slice(after + 1));
    }
    // The SDK's own resume helper (it reads the stream whole and skips what was seen).
    const helper = client.responses.stream({ response_id: background.id, starting_after: 10 });
    const final = await helper.finalResponse();
    expect(final.output_text).toBe((await client.responses.retrieve(background.id)).output_text);
  });

  it('ends a resume at or past the end of an ended response with an error naming starting_after, which the SDK throws', async () => {
    const done = await client.responses.create({ input: scripted({ text: 'Short.' }), background: true });
    const all = await collect(await client.responses.retrieve(done.id, { stream: true }));
    expectValidStream(all);
    const last = all.at(-1)!.sequence_number;
    for (const after of [last, last + 50]) {
      const stream = await client.responses.retrieve(done.id, { stream: true, starting_after: after });
      const error = await collect(stream).then(
        () => {
          throw new Error('expected the stream to fail');
        },
        (thrown: unknown) => thrown as InstanceType<typeof OpenAI.APIError>,
      );
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect(error.error).toMatchObject({ type: 'invalid_request_error', param: 'starting_after', code: 'invalid_request', message: expect.stringContaining(`${last}`) });
    }
    // Read as events, not through the SDK's stream: one `error` event in the documented shape, then the end.
    const raw = await fetch(`${stack.url}/openai/v1/responses/${done.id}?stream=true&starting_after=${last + 50}`, { headers: { authorization: `Bearer ${client.apiKey}` } });
    const events = (await raw.text()).split('\n\n').filter((block) => block.startsWith('event:'));
    expect(events).toHaveLength(1);
    expect(JSON.parse(events[0]!.split('\ndata: ')[1]!)).toMatchObject({
      type: 'error',
      code: 'invalid_request',
      param: 'starting_after',
      message: expect.any(String),
      sequence_number: last + 51,
    });
    // Just before the end still gets the end.
    expect(await collect(await client.responses.retrieve(done.id, { stream: true, starting_after: last - 1 }))).toEqual([all.at(-1)]);
  });

  it('cancels a background response: its stream ends incomplete, and the text it had streamed stays as an incomplete message', async () => {
    const background = await client.responses.create({ input: scripted({ tokens: 2000, tokenDelayMs: 20 }), background: true });
    const stream = await client.responses.retrieve(background.id, { stream: true });
    const events: StreamEvent[] = [];
    let cancelled: Awaited<ReturnType<typeof client.responses.cancel>> | undefined;
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'response.output_text.delta' && !cancelled) cancelled = await client.responses.cancel(background.id);
    }
    expectValidStream(events);
    expect(events.at(-1)).toMatchObject({ type: 'response.incomplete', response: { status: 'cancelled' } });
    // What the stream had shown is what the response keeps: the cancel's answer, a retrieve and the stream agree.
    const retrieved = await client.responses.retrieve(background.id);
    expect(retrieved.status).toBe('cancelled');
    expect(retrieved.output).toEqual([expect.objectContaining({ type: 'message', status: 'incomplete' })]);
    expect(retrieved.output_text).toMatch(/^lorem/);
    expect(cancelled).toMatchObject({ status: 'cancelled', output_text: retrieved.output_text });
    expect(accumulated(events).output_text).toBe(retrieved.output_text);
    expect(accumulated(events).output).toEqual(retrieved.output);
  });

  it('continues a conversation with previous_response_id', async () => {
    const first = await client.responses.create({ input: scripted({ text: 'First answer.' }) });
    const second = await client.responses.create({ input: scripted({ text: 'Second answer.' }), previous_response_id: first.id });
    expect(second).toMatchObject({ status: 'completed', previous_response_id: first.id, output_text: 'Second answer.' });
    const requests = stack.scripted.requests.filter((request: any) => JSON.stringify(request.body.messages).includes('Second answer'));
    const history = (requests.at(-1)!.body as any).messages.map((message: any) => [message.role, message.content]);
    expect(history).toEqual([
      ['user', scripted({ text: 'First answer.' })],
      ['assistant', 'First answer.'],
      ['user', scripted({ text: 'Second answer.' })],
    ]);
  });

  it('runs a function named after a Switchyard tool and declaring no parameters server-side, showing the call and its output', async () => {
    const response = await client.responses.create({
      input: scripted({ steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }] }, { text: 'It is 42.' }] }),
      tools: [{ type: 'function', name: 'calculator', parameters: null, strict: null }],
    });
    expect(response.status).toBe('completed');
    expect(response.output.map((item) => item.type)).toEqual(['function_call', 'function_call_output', 'message']);
    const [call, output] = response.output as [OpenAI.Responses.ResponseFunctionToolCall, OpenAI.Responses.ResponseFunctionToolCallOutputItem];
    expect(call).toMatchObject({ name: 'calculator', arguments: JSON.stringify({ expression: '6*7' }) });
    expect(output).toMatchObject({ call_id: call.call_id, output: JSON.stringify({ expression: '6*7', result: 42 }) });
    expect(response.output_text).toBe('It is 42.');
  });

  it("leaves a function declaring parameters to the caller whatever its name: the model gets the caller's schema, and the response ends with the calls", async () => {
    const adds = { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] };
    const asks = { type: 'object', properties: { question: { type: 'string' } } };
    const tools: OpenAI.Responses.Tool[] = [
      { type: 'function', name: 'calculator', description: 'Adds two numbers', parameters: adds, strict: false },
      { type: 'function', name: 'confirm', parameters: asks, strict: false },
    ];
    const input = markedScripted(
      {
        steps: [
          {
            toolCalls: [
              { name: 'calculator', arguments: { a: 6, b: 7 } },
              { name: 'confirm', arguments: { question: 'Sure?' } },
            ],
          },
          { text: 'Thirteen, confirmed.' },
        ],
      },
      'own-functions',
    );
    // In the foreground: nothing waits for a websocket client the caller does not have.
    const response = await client.responses.create({ input, tools });
    expect(response.status).toBe('completed');
    expect(response.output).toEqual([
      expect.objectContaining({ type: 'function_call', name: 'calculator', arguments: JSON.stringify({ a: 6, b: 7 }) }),
      expect.objectContaining({ type: 'function_call', name: 'confirm', arguments: JSON.stringify({ question: 'Sure?' }) }),
    ]);
    const sent = (stack.scripted.requests.find((request) => JSON.stringify(request.body).includes('own-functions'))!.body as any).tools;
    expect(sent.map((tool: any) => [tool.function.name, tool.function.parameters])).toEqual([
      ['calculator', adds],
      ['confirm', asks],
    ]);
    // Nothing of it ran here.
    const { rows } = await stack.resources.db.query<{ turn_id: string }>('SELECT turn_id FROM openai_responses WHERE id = $1', [response.id]);
    expect(await stack.resources.toolCalls.listForTurn(rows[0]!.turn_id)).toEqual([]);

    // The caller answers its calls, and the model goes on.
    const calls = response.output as OpenAI.Responses.ResponseFunctionToolCall[];
    const answered = await client.responses.create({
      previous_response_id: response.id,
      input: calls.map((call) => ({ type: 'function_call_output' as const, call_id: call.call_id, output: call.name === 'calculator' ? '13' : 'yes' })),
      tools,
    });
    expect(answered).toMatchObject({ status: 'completed', output_text: 'Thirteen, confirmed.' });
  });

  it('refuses a client tool or one needing approval named as a function declaring no parameters: 400 unsupported_parameter naming tools, nothing stored', async () => {
    const owner = await stack.createUser('responses-refused-tools');
    const ownClient = openAiClient(stack.url, owner.apiKey);
    for (const name of ['confirm', 'random_number']) {
      const error = await ownClient.responses
        .create({
          input: scripted({ text: 'Never.' }),
          tools: [
            { type: 'function', name: 'calculator', parameters: null, strict: null },
            { type: 'function', name, parameters: null, strict: null },
          ],
          background: true,
        })
        .then(
          () => {
            throw new Error('expected a 400');
          },
          (thrown: unknown) => thrown as InstanceType<typeof OpenAI.APIError>,
        );
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.error).toMatchObject({ type: 'invalid_request_error', param: 'tools', code: 'unsupported_parameter', message: expect.stringContaining(`"${name}"`) });
    }
    // Switchyard's calculator and the caller's in one request: the model could not tell them apart.
    await expect(
      ownClient.responses.create({
        input: 'hi',
        tools: [
          { type: 'function', name: 'calculator', parameters: null, strict: null },
          { type: 'function', name: 'calculator', parameters: {}, strict: false },
        ],
        background: true,
      }),
    ).rejects.toMatchObject({ status: 400, error: { param: 'tools', code: 'invalid_request', message: expect.stringContaining('declared twice') } });
    const { rows } = await stack.resources.db.query(
      'SELECT (SELECT count(*)::int FROM conversations WHERE user_id = $1) AS conversations, (SELECT count(*)::int FROM turns WHERE user_id = $1) AS turns',
      [owner.id],
    );
    expect(rows[0]).toEqual({ conversations: 0, turns: 0 });
  });

  it("leaves the caller's own function to it, and goes on with its function_call_output", async () => {
    const scenario = scripted({ steps: [{ toolCalls: [{ name: 'get_weather', arguments: { city: 'Oslo' } }] }, { text: 'It is sunny in Oslo.' }] });
    const tools: OpenAI.Responses.Tool[] = [
      { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: true },
    ];
    const events = await collect(await client.responses.create({ input: scenario, tools, stream: true }));
    expectValidStream(events);
    const asked = (events.at(-1) as OpenAI.Responses.ResponseCompletedEvent).response;
    expect(asked.status).toBe('completed');
    expect(asked.output).toEqual([expect.objectContaining({ type: 'function_call', name: 'get_weather', arguments: JSON.stringify({ city: 'Oslo' }) })]);
    expect(events.map((event) => event.type)).toEqual(expect.arrayContaining(['response.function_call_arguments.delta', 'response.function_call_arguments.done']));
    const call = asked.output[0] as OpenAI.Responses.ResponseFunctionToolCall;

    // Without the call's output, the conversation cannot go on (as with OpenAI).
    await expect(client.responses.create({ input: 'and?', previous_response_id: asked.id, tools })).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    const answered = await client.responses.create({
      previous_response_id: asked.id,
      input: [{ type: 'function_call_output', call_id: call.call_id, output: JSON.stringify({ sky: 'sunny' }) }],
      tools,
    });
    expect(answered).toMatchObject({ status: 'completed', output_text: 'It is sunny in Oslo.', previous_response_id: asked.id });
    const sent = (stack.scripted.requests.filter((request: any) => JSON.stringify(request.body.messages).includes('sunny')).at(-1)!.body as any).messages;
    expect(sent.slice(-2)).toEqual([
      expect.objectContaining({
        role: 'assistant',
        tool_calls: [expect.objectContaining({ id: call.call_id, function: { name: 'get_weather', arguments: JSON.stringify({ city: 'Oslo' }) } })],
      }),
      { role: 'tool', tool_call_id: call.call_id, content: JSON.stringify({ sky: 'sunny' }) },
    ]);
  });

  it('refuses a function_call_output that answers no function call, storing nothing, and the conversation goes on', async () => {
    const owner = await stack.createUser('responses-orphan');
    const ownClient = openAiClient(stack.url, owner.apiKey);
    const refused = async (request: OpenAI.Responses.ResponseCreateParamsNonStreaming) => {
      const error = await ownClient.responses.create(request).then(
        () => {
          throw new Error('expected a 400');
        },
        (thrown: unknown) => thrown as InstanceType<typeof OpenAI.APIError>,
      );
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expect(error.error).toMatchObject({ type: 'invalid_request_error', param: 'input', code: 'invalid_request', message: expect.stringContaining('call_nowhere') });
    };
    const count = async (table: 'turns' | 'conversations') =>
      (await stack.resources.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE user_id = $1`, [owner.id])).rows[0]!.n;

    // Without previous_response_id: nothing in the input calls it.
    await refused({
      input: [
        { role: 'user', content: 'Go on.' },
        { type: 'function_call_output', call_id: 'call_nowhere', output: '{}' },
      ],
    });
    // An output given before its call does not answer it either.
    await refused({
      input: [
        { type: 'function_call_output', call_id: 'call_nowhere', output: '{}' },
        { type: 'function_call', call_id: 'call_nowhere', name: 'f', arguments: '{}' },
        { role: 'user', content: 'Go on.' },
      ],
    });
    expect([await count('conversations'), await count('turns')]).toEqual([0, 0]);

    // With previous_response_id: that response called no function.
    const first = await ownClient.responses.create({ input: scripted({ text: 'Orphan first.' }) });
    await refused({
      previous_response_id: first.id,
      input: [
        { role: 'user', content: 'Go on.' },
        { type: 'function_call_output', call_id: 'call_nowhere', output: '{}' },
      ],
    });
    expect(await count('turns')).toBe(1);

    const next = await ownClient.responses.create({ previous_response_id: first.id, input: scripted({ text: 'Orphan next.' }) });
    expect(next).toMatchObject({ status: 'completed', output_text: 'Orphan next.' });
    const sent = stack.scripted.requests.filter((request: any) => JSON.stringify(request.body.messages).includes('Orphan next.')).at(-1)!.body as any;
    expect(JSON.stringify(sent)).not.toContain('call_nowhere');
  });

  it('refuses to continue a response that is not the latest of its conversation (409), and sends nothing of it to the model', async () => {
    const r1 = await client.responses.create({ input: scripted({ text: 'Branch one.' }) });
    const r2 = await client.responses.create({ previous_response_id: r1.id, input: scripted({ text: 'Branch two.' }) });
    const error = await client.responses.create({ previous_response_id: r1.id, input: scripted({ text: 'Branch from one.' }) }).then(
      () => {
        throw new Error('expected a 409');
      },
      (thrown: unknown) => thrown as InstanceType<typeof OpenAI.APIError>,
    );
    expect(error).toBeInstanceOf(OpenAI.ConflictError);
    expect(error.error).toMatchObject({
      type: 'invalid_request_error',
      param: 'previous_response_id',
      code: 'conflict',
      message: expect.stringContaining('only the latest response'),
    });
    expect(stack.scripted.requests.some((request) => JSON.stringify(request.body).includes('Branch from one.'))).toBe(false);
    // The latest one still goes on.
    expect(await client.responses.create({ previous_response_id: r2.id, input: scripted({ text: 'Branch three.' }) })).toMatchObject({
      status: 'completed',
      output_text: 'Branch three.',
    });
  });
});
