import { apiClient } from '../../support/http';
import { markedScripted } from '../../support/scripted';
import { httpToolEntry, startToolHttpServer, type ToolHttpServer } from '../../support/tool-servers';
import { eventsOfType, scripted, startToolTurnHarness, type ToolTurnHarness } from '../../support/tool-turns';
import { TestWsClient } from '../../support/ws-client';

/** Which tools the model is offered: the turn's list, else the conversation's, else all. */
describe('tool selection', () => {
  let harness: ToolTurnHarness;
  // The tools the service runs first, then the client tools (each in name order).
  const ALL = ['calculator', 'current_time', 'random_number', 'confirm'];

  beforeAll(async () => {
    harness = await startToolTurnHarness({
      toolFiles: { 'client.json': { kind: 'client', name: 'confirm', description: 'Asks the user' } },
    });
  });
  afterAll(() => harness.close());

  /** The names of the tools (and the tool_choice) the scripted model received for a turn. */
  async function offered(options: { conversation?: Record<string, unknown>; body?: Record<string, unknown> }) {
    const run = await harness.runTurn({ text: 'ok' }, options);
    expect(run.events.at(-1).type).toBe('turn-finish');
    const [request] = harness.providerRequests(run.marker);
    return { names: request.tools?.map((tool: any) => tool.function.name) ?? null, toolChoice: request.tool_choice };
  }

  it('offers every tool when neither the turn nor the conversation says, with their schemas', async () => {
    const run = await harness.runTurn({ text: 'ok' });
    const [request] = harness.providerRequests(run.marker);
    expect(request.tools.map((tool: any) => tool.function.name)).toEqual(ALL);
    expect(request.tools.find((tool: any) => tool.function.name === 'calculator')).toEqual({
      type: 'function',
      function: { name: 'calculator', description: expect.any(String), parameters: expect.objectContaining({ type: 'object' }) },
    });
    expect(request).not.toHaveProperty('tool_choice');
  });

  it('answers "use tools please" (the README\'s example) with the tools the service runs, not a client tool nobody answers', async () => {
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const posted = await harness.api.post(`/v1/conversations/${conversationId}/turns`, { content: 'use tools please' });
    const start = await client.waitFor((frame) => frame.type === 'event' && frame.event.type === 'tool_processing_start');
    expect(start.event.toolCalls.map((call: { toolName: string }) => call.toolName)).toEqual(['calculator', 'current_time', 'random_number']);
    const events = (await client.waitForTurnEnd(posted.body.turnId)).filter((event) => event.turnId === posted.body.turnId);
    expect(events.at(-1).type).toBe('turn-finish');
    expect(events.filter((event) => event.type === 'tool-result').map((event) => event.error ?? null)).toEqual([null, null, null]);
  });

  it("limits the tools to the conversation's list, and the turn's list wins over it", async () => {
    expect((await offered({ conversation: { tools: ['calculator', 'confirm'] } })).names).toEqual(['calculator', 'confirm']);
    expect((await offered({ conversation: { tools: ['calculator'] }, body: { tools: ['current_time'] } })).names).toEqual(['current_time']);
  });

  it('offers no tools at all for [] (on the turn or the conversation)', async () => {
    expect((await offered({ body: { tools: [] } })).names).toBeNull();
    expect((await offered({ conversation: { tools: [] } })).names).toBeNull();
    expect((await offered({ conversation: { tools: [] }, body: { tools: ['random_number'] } })).names).toEqual(['random_number']);
  });

  it('refuses an unknown tool name on a turn with 400', async () => {
    const conversationId = await harness.newConversation();
    const turn = await harness.api.post(`/v1/conversations/${conversationId}/turns`, { content: 'hi', tools: ['calculator', 'no_such_tool'] });
    expect(turn.status).toBe(400);
    expect(turn.body.error).toMatchObject({ code: 'invalid_request', details: [{ field: 'tools', message: expect.stringContaining('no_such_tool') }] });
  });

  it('refuses an unknown tool name on a conversation with 400', async () => {
    const conversation = await harness.api.post('/v1/conversations', { tools: ['no_such_tool'] });
    expect(conversation.status).toBe(400);
    expect(conversation.body.error.code).toBe('invalid_request');
    expect(JSON.stringify(conversation.body.error)).toContain('no_such_tool');
  });

  it('offers, lists and invokes only the tools an admin allowed a user', async () => {
    const limited = await harness.stack.resources.users.createUserWithKey('limited', ['calculator', 'confirm']);
    const api = apiClient(harness.stack.url, limited.apiKey);
    expect((await api.get('/v1/tools')).body.tools.map((tool: any) => tool.name)).toEqual(['calculator', 'confirm']);
    expect((await api.post('/v1/tools/current_time/invoke', { params: {} })).status).toBe(404);
    // A tool the user may not use is as unknown to them as one that does not exist.
    expect((await api.post('/v1/conversations', { tools: ['current_time'] })).status).toBe(400);
    expect((await api.post('/v1/tools/calculator/invoke', { params: { expression: '2*3' } })).body.result).toMatchObject({ result: 6 });

    const conversationId = (await api.post('/v1/conversations', {})).body.id;
    const marker = 'limited-user-turn';
    const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content: `${marker} ${scripted({ text: 'ok' })}` });
    expect(posted.status).toBe(202);
    const request = await harness.stack.scripted.waitForRequest((each) => JSON.stringify((each.body as any).messages).includes(marker));
    expect((request.body as any).tools.map((tool: any) => tool.function.name)).toEqual(['calculator', 'confirm']);
    // The turn's event stream ends with the turn.
    const events = await fetch(`${harness.stack.url}/v1/turns/${posted.body.turnId}/events`, { headers: { authorization: `Bearer ${limited.apiKey}` } });
    expect(await events.text()).toContain('event: turn-finish');
  });

  it('passes toolChoice through in its OpenAI forms', async () => {
    const named = { type: 'function', function: { name: 'calculator' } };
    expect(await offered({ body: { toolChoice: named } })).toEqual({ names: ALL, toolChoice: named });
    expect((await offered({ body: { toolChoice: 'none' } })).toolChoice).toBe('none');
    expect((await offered({ body: { toolChoice: 'required', tools: ['current_time'] } })).toolChoice).toBe('required');
  });
});

/** A tool an admin did not allow a user is refused in that user's turns, whatever the model asks. */
describe("a user's tool allow-list in a turn", () => {
  const ADMIN_TOKEN = 'admin-token-for-allow-list-tests';
  let server: ToolHttpServer;
  let harness: ToolTurnHarness;

  beforeAll(async () => {
    server = await startToolHttpServer();
    server.route('/record', (request) => ({ body: { recorded: request.body } }));
    server.route('/secret', { body: { leaked: true } });
    const tool = (name: string) => httpToolEntry(server.url, name, { timeoutMs: 800, retries: 0 });
    harness = await startToolTurnHarness({ toolFiles: { 'tools.json': { tools: [tool('record'), tool('secret')] } }, env: { ADMIN_TOKEN } });
  });
  afterAll(async () => {
    await harness.close();
    await server.close();
  });

  it('refuses a call to a tool outside the allow-list set with PUT /v1/admin/users/:id/tools as invalid_arguments, and never runs it', async () => {
    const user = await harness.stack.resources.users.createUserWithKey('allow-listed');
    const admin = apiClient(harness.stack.url, ADMIN_TOKEN);
    expect((await admin.put(`/v1/admin/users/${user.id}/tools`, { tools: ['record'] })).status).toBe(200);
    const api = apiClient(harness.stack.url, user.apiKey);
    const conversationId = (await api.post('/v1/conversations', {})).body.id;
    const client = await TestWsClient.subscribed(harness.stack.url, { apiKey: user.apiKey }, conversationId);
    try {
      const marker = 'allow-list-turn';
      const scenario = {
        steps: [
          {
            toolCalls: [
              { name: 'secret', arguments: { n: 1 } },
              { name: 'record', arguments: { n: 2 } },
            ],
          },
          { text: 'done' },
        ],
      };
      const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content: markedScripted(scenario, marker) });
      expect(posted.status).toBe(202);
      const events = (await client.waitForTurnEnd(posted.body.turnId)).filter((event) => event.turnId === posted.body.turnId);
      expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });

      const [secret, record] = eventsOfType(events, 'tool-call-end');
      expect(secret).toMatchObject({ args: null, error: { code: 'invalid_arguments', message: expect.stringMatching(/"secret".*does not offer/) } });
      const results = new Map(eventsOfType(events, 'tool-result').map((event) => [event.toolCallId, event]));
      expect(results.get(secret.toolCallId)).toMatchObject({ error: { code: 'invalid_arguments' }, attempts: 0 });
      expect(results.get(secret.toolCallId)).not.toHaveProperty('result');
      expect(results.get(record.toolCallId)).toMatchObject({ result: { recorded: { n: 2 } }, attempts: 1 });
      // The tool server never saw the refused call; the allowed one ran.
      expect(server.requests.filter((request) => request.path === '/secret')).toHaveLength(0);
      expect(server.requests.filter((request) => request.path === '/record')).toHaveLength(1);

      const [first, followUp] = harness.providerRequests(marker);
      expect(first.tools.map((tool: any) => tool.function.name)).toEqual(['record']);
      const toolMessages = followUp.messages.filter((message: any) => message.role === 'tool');
      expect(toolMessages.map((message: any) => JSON.parse(message.content))).toEqual([
        { error: { code: 'invalid_arguments', message: secret.error.message } },
        { recorded: { n: 2 } },
      ]);
      const turn = await api.get(`/v1/turns/${posted.body.turnId}`);
      expect(turn.body.toolCalls.map((call: any) => [call.toolName, call.status, call.attempts])).toEqual([
        ['secret', 'failed', 0],
        ['record', 'succeeded', 1],
      ]);
    } finally {
      client.close();
    }
  });
});
