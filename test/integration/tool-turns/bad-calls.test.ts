import { poll } from '../../support/poll';
import { startToolHttpServer, type ToolHttpServer } from '../../support/tool-servers';
import { argumentTextsByCall, eventsOfType, startToolTurnHarness, type ToolTurnHarness } from '../../support/tool-turns';

/**
 * Arguments as the model streams them: put together whatever the fragmentation, and checked
 * before anything runs. A bad call is answered to the model as an error, never executed.
 */
describe('tool-call arguments', () => {
  let server: ToolHttpServer;
  let harness: ToolTurnHarness;

  beforeAll(async () => {
    server = await startToolHttpServer();
    const record = {
      name: 'record',
      description: 'Records a note',
      url: `${server.url}/record`,
      timeoutMs: 800,
      retries: 0,
      inputSchema: {
        type: 'object',
        properties: { text: { type: 'string' }, nested: { type: 'object' }, list: { type: 'array' } },
        required: ['text'],
        additionalProperties: false,
      },
    };
    const other = { name: 'other', description: 'Not offered to the turns below', url: `${server.url}/other`, retries: 0 };
    harness = await startToolTurnHarness({ toolFiles: { 'tools.json': [record, other] } });
  });
  afterAll(async () => {
    await harness.close();
    await server.close();
  });

  // Escapes (\u00e9, a surrogate pair, \"), and strings full of braces and brackets: a split
  // inside any of them must not change the JSON.
  const tricky = [
    String.raw`{"text":"caf\u00e9 {\"quoted\": [1, 2]} \ud83d\ude00 é","nested":{"a":{"b":[1,{"c":"}"}]}},"list":["{","}","[","]",null,true,-1.5e3]}`,
    String.raw`{ "text" : "\\ and \/ and \n and \t" , "list" : [ "\u007b\u007d" ] }`,
  ];

  async function expectAssembled(scenarioStep: Record<string, unknown>): Promise<void> {
    const before = server.requests.length;
    const run = await harness.runTurn({ steps: [{ toolCalls: tricky.map((text) => ({ name: 'record', arguments: text })), ...scenarioStep }, { text: 'ok' }] });
    expect(run.events.at(-1).type).toBe('turn-finish');
    const ends = eventsOfType(run.events, 'tool-call-end');
    expect(ends).toHaveLength(2);
    const texts = argumentTextsByCall(run.events);
    ends.forEach((end, index) => {
      expect(texts.get(end.toolCallId)).toBe(tricky[index]);
      expect(end.args).toEqual(JSON.parse(tricky[index]!));
      expect(end).not.toHaveProperty('error');
    });

    const turn = await harness.api.get(`/v1/turns/${run.turnId}`);
    expect(turn.body.toolCalls.map((call: any) => call.argumentsText)).toEqual(tricky);
    expect(turn.body.toolCalls.map((call: any) => call.args)).toEqual(tricky.map((text) => JSON.parse(text)));
    const bodies = server.requests.slice(before).map((request) => request.body);
    expect(bodies).toHaveLength(2);
    expect(bodies).toEqual(expect.arrayContaining(tricky.map((text) => JSON.parse(text))));
    // The model gets back exactly the text it sent.
    const followUp = harness.providerRequests(run.marker)[1];
    expect(followUp.messages.at(-3).tool_calls.map((call: any) => call.function.arguments)).toEqual(tricky);
  }

  it('assembles arguments split at every character, calls interleaved, vLLM-style first fragments', async () => {
    await expectAssembled({ argumentChunkChars: 1, interleave: true, fragmentStyle: 'vllm' });
  });

  it('assembles arguments split at chosen offsets, inside escapes and surrogate pairs, OpenAI-style and without ids', async () => {
    const offsets = [1, 2, 9, 10, 11, 12, 13, 14, 15, 20, 33, 34, 35, 36, 37, 38, 39, 40, 41, 60, 61, 62];
    await expectAssembled({ splitArgumentsAt: offsets, interleave: true, fragmentStyle: 'openai', omitIds: true });
  });

  it('runs calls whose provider splits the tool name over fragments and sends the id after it', async () => {
    await expectAssembled({ fragmentStyle: 'split-name', argumentChunkChars: 4, interleave: true });
    const run = await harness.runTurn({ steps: [{ toolCalls: [{ name: 'record', arguments: { text: 'x' } }], fragmentStyle: 'split-name' }, { text: 'ok' }] });
    expect(eventsOfType(run.events, 'tool-call-start')).toEqual([expect.objectContaining({ toolCallId: 'call_0', toolName: 'record' })]);
    expect(eventsOfType(run.events, 'tool-result')).toEqual([expect.objectContaining({ toolCallId: 'call_0', attempts: 1 })]);
  });

  it('shows the in-flight argument buffers of a streaming step on GET /v1/turns/:id', async () => {
    const args = ['{"text":"first of two"}', '{"text":"second of two"}'];
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    // Two calls, interleaved, five characters a fragment; the stream goes silent after each
    // call's first fragment and two pieces of arguments (6 tokens), and stays so.
    const { turnId } = await harness.postTurn(conversationId, {
      toolCalls: args.map((text) => ({ name: 'record', arguments: text })),
      argumentChunkChars: 5,
      interleave: true,
      stallAfterTokens: 6,
    });
    const streamed = () => [...argumentTextsByCall(client.events()).values()];
    await client.waitFor(() => streamed().join('|') === args.map((text) => text.slice(0, 10)).join('|'));

    const expected = eventsOfType(client.events(), 'tool-call-start').map((start, index) => ({
      toolCallId: start.toolCallId,
      toolName: 'record',
      argumentsText: args[index]!.slice(0, 10),
    }));
    // The buffers are written to Redis without holding up the stream: wait until they land.
    let turn = await harness.api.get(`/v1/turns/${turnId}`);
    await poll(
      () => `the partial tool calls stayed ${JSON.stringify(turn.body.partialToolCalls)}`,
      async () => {
        turn = await harness.api.get(`/v1/turns/${turnId}`);
        return JSON.stringify(turn.body.partialToolCalls) === JSON.stringify(expected);
      },
    );
    expect(turn.body).toMatchObject({ status: 'running', step: 0, toolCalls: [], partialToolCalls: expected });

    expect((await harness.api.post(`/v1/turns/${turnId}/cancel`)).body.status).toBe('cancelled');
    await client.waitForTurnEnd(turnId);
    const ended = await harness.api.get(`/v1/turns/${turnId}`);
    expect(ended.body).toMatchObject({ status: 'cancelled', partialToolCalls: [] });
  });

  it('answers invalid JSON, schema-invalid arguments, an unknown tool and one the turn does not offer with invalid_arguments, running none', async () => {
    const before = server.requests.length;
    const calls = [
      { name: 'record', arguments: '{"text": "unterminated' },
      { name: 'record', arguments: { text: 5 } },
      { name: 'record', arguments: { text: 'ok', colour: 'red' } },
      { name: 'record', arguments: {} },
      { name: 'record', arguments: '[1, 2]' },
      { name: 'no_such_tool', arguments: {} },
      { name: 'other', arguments: {} },
    ];
    const run = await harness.runTurn({ steps: [{ toolCalls: calls }, { text: 'I will try again' }] }, { body: { tools: ['record'] } });
    expect(run.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });

    const ends = eventsOfType(run.events, 'tool-call-end');
    expect(ends).toHaveLength(calls.length);
    for (const end of ends) expect(end).toMatchObject({ args: null, error: { code: 'invalid_arguments', message: expect.any(String) } });
    const messages = ends.map((end) => end.error.message as string);
    expect(messages[0]).toMatch(/not valid JSON/);
    expect(messages[1]).toMatch(/"text".*string/);
    expect(messages[2]).toMatch(/"colour"/);
    expect(messages[3]).toMatch(/"text".*required/);
    expect(messages[4]).toMatch(/object/);
    expect(messages[5]).toMatch(/no_such_tool/);
    expect(messages[6]).toMatch(/"other".*does not offer/);

    const results = eventsOfType(run.events, 'tool-result');
    expect(results.map((event) => [event.toolCallId, event.error.code, event.attempts])).toEqual(ends.map((end) => [end.toolCallId, 'invalid_arguments', 0]));
    expect(eventsOfType(run.events, 'tool_processing_start')[0].toolCalls.map((call: any) => call.args)).toEqual(calls.map(() => null));
    expect(eventsOfType(run.events, 'tool_processing_complete')).toEqual([expect.objectContaining({ results: calls.length, failed: calls.length })]);
    // Nothing ran: the tool server saw no request.
    expect(server.requests.length).toBe(before);

    // The model reads what was wrong with each call, as that call's result.
    const followUp = harness.providerRequests(run.marker)[1];
    const toolMessages = followUp.messages.filter((message: any) => message.role === 'tool');
    expect(toolMessages.map((message: any) => message.tool_call_id)).toEqual(ends.map((end) => end.toolCallId));
    expect(toolMessages.map((message: any) => JSON.parse(message.content))).toEqual(messages.map((message) => ({ error: { code: 'invalid_arguments', message } })));
    const assistant = followUp.messages.at(-calls.length - 1);
    expect(assistant.tool_calls.map((call: any) => call.function.arguments)).toEqual(
      calls.map((call) => (typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments))),
    );

    const turn = await harness.api.get(`/v1/turns/${run.turnId}`);
    expect(turn.body.toolCalls.map((call: any) => [call.status, call.attempts, call.args, call.error.code])).toEqual(calls.map(() => ['failed', 0, null, 'invalid_arguments']));
  });
});
