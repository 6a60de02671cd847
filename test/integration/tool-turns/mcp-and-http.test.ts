import { UnrecoverableError, Worker } from 'bullmq';
import { enqueueInvocation, TOOL_QUEUE } from '../../../src/queue/tool-queue';
import { invocationIdFor } from '../../../src/tool-calls/tool-invocations';
import { apiClient } from '../../support/http';
import { everythingServerEntry, scriptedMcpServerEntry, startToolHttpServer, type ToolHttpServer } from '../../support/tool-servers';
import { eventsOfType, startToolTurnHarness, type ToolTurnHarness } from '../../support/tool-turns';

/**
 * Tools from TOOLS_DIR in real turns: the real `@modelcontextprotocol/server-everything` over
 * stdio (mcp.json) and http tools declared in JSON files; plus the tools routes of the API.
 */
describe('mcp and http tools in turns', () => {
  let server: ToolHttpServer;
  let harness: ToolTurnHarness;

  beforeAll(async () => {
    server = await startToolHttpServer();
    server.route('/tickets', (request) => ({ status: 201, body: { id: 'T-1', title: (request.body as { title: string }).title } }));
    server.route('/fail', { status: 404, body: 'no such thing' });
    harness = await startToolTurnHarness({
      toolFiles: {
        'mcp.json': { mcpServers: { everything: everythingServerEntry(), scripted: scriptedMcpServerEntry() } },
        'tickets.json': {
          name: 'create_ticket',
          description: 'Creates a support ticket',
          url: `${server.url}/tickets`,
          headers: { 'X-Team': 'support' },
          timeoutMs: 800,
          retries: 0,
          fields: [
            { name: 'title', required: true },
            { name: 'priority', type: 'integer', enum: [1, 2, 3] },
          ],
        },
        'more.json': [
          { name: 'search', description: 'Searches', url: `${server.url}/search`, method: 'GET', timeoutMs: 800, fields: [{ name: 'q', required: true }] },
          { name: 'missing', description: 'Always 404', url: `${server.url}/fail`, timeoutMs: 800 },
          { kind: 'client', name: 'confirm', description: 'Asks the user' },
        ],
      },
    });
  });
  afterAll(async () => {
    await harness.close();
    await server.close();
  });

  it('lists every kind on GET /v1/tools, MCP tools as <server>__<tool>', async () => {
    const listed = await harness.api.get('/v1/tools');
    expect(listed.status).toBe(200);
    const byName = new Map(listed.body.tools.map((tool: any) => [tool.name, tool]));
    expect(byName.get('everything__echo')).toEqual({
      name: 'everything__echo',
      description: 'Echoes back the input string',
      kind: 'mcp',
      needsApproval: false,
      inputSchema: expect.objectContaining({ type: 'object', properties: { message: expect.objectContaining({ type: 'string' }) }, required: ['message'] }),
    });
    expect(byName.get('create_ticket')).toMatchObject({ kind: 'http', inputSchema: { type: 'object', required: ['title'] } });
    expect(byName.get('confirm')).toMatchObject({ kind: 'client' });
    expect(byName.get('calculator')).toMatchObject({ kind: 'builtin' });
    const names = [...byName.keys()] as string[];
    expect(names.filter((name) => name.includes('__')).every((name) => /^(everything|scripted)__/.test(name))).toBe(true);
    expect(names).toEqual(expect.arrayContaining(['scripted__echo', 'scripted__fail']));
    for (const tool of listed.body.tools) expect(Object.keys(tool).sort()).toEqual(['description', 'inputSchema', 'kind', 'name', 'needsApproval']);
  });

  it("calls server-everything's echo in a turn and gives the model its CallToolResult", async () => {
    const run = await harness.runTurn({ steps: [{ toolCalls: [{ name: 'everything__echo', arguments: { message: 'hello from a turn' } }] }, { text: 'echoed' }] });
    expect(run.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    const [result] = eventsOfType(run.events, 'tool-result');
    expect(result).toMatchObject({ result: { content: [{ type: 'text', text: 'Echo: hello from a turn' }] }, attempts: 1 });
    const followUp = harness.providerRequests(run.marker)[1];
    expect(JSON.parse(followUp.messages.at(-1).content)).toEqual({ content: [{ type: 'text', text: 'Echo: hello from a turn' }] });
  });

  it('counts an MCP result with isError as a failed call, not retried', async () => {
    const run = await harness.runTurn({ steps: [{ toolCalls: [{ name: 'scripted__fail' }] }, { text: 'it failed' }] });
    expect(run.events.at(-1).type).toBe('turn-finish');
    expect(eventsOfType(run.events, 'tool-result')).toEqual([
      expect.objectContaining({ error: expect.objectContaining({ code: 'tool_error', message: 'the scripted tool failed' }), attempts: 1 }),
    ]);
    expect(eventsOfType(run.events, 'tool_processing_complete')).toEqual([expect.objectContaining({ results: 1, failed: 1 })]);
    const followUp = harness.providerRequests(run.marker)[1];
    expect(JSON.parse(followUp.messages.at(-1).content)).toEqual({ error: { code: 'tool_error', message: 'the scripted tool failed' } });
  });

  it('calls an http tool from a tools file with its body, headers and Idempotency-Key', async () => {
    const before = server.requests.length;
    const run = await harness.runTurn({
      steps: [
        {
          toolCalls: [
            { name: 'create_ticket', arguments: { title: 'Printer on fire', priority: 1 } },
            { name: 'search', arguments: { q: 'red shoes' } },
          ],
        },
        { text: 'filed' },
      ],
    });
    expect(run.events.at(-1).type).toBe('turn-finish');
    const [ticketCall, searchCall] = eventsOfType(run.events, 'tool-call-end').map((event) => event.toolCallId);
    const requests = server.requests.slice(before);
    const ticket = requests.find((request) => request.path === '/tickets')!;
    expect(ticket).toMatchObject({ method: 'POST', bodyText: '{"title":"Printer on fire","priority":1}' });
    expect(ticket.headers).toMatchObject({ 'idempotency-key': `${run.turnId}:${ticketCall}`, 'content-type': 'application/json', 'x-team': 'support' });
    const search = requests.find((request) => request.path === '/search')!;
    expect(search).toMatchObject({ method: 'GET', query: { q: 'red shoes' }, bodyText: '' });
    expect(search.headers['idempotency-key']).toBe(`${run.turnId}:${searchCall}`);

    const results = new Map(eventsOfType(run.events, 'tool-result').map((event) => [event.toolCallId, event]));
    expect(results.get(ticketCall)).toMatchObject({ result: { id: 'T-1', title: 'Printer on fire' }, attempts: 1 });
  });

  it('shows tool calls with their args, status, attempts and results on GET /v1/turns/:id', async () => {
    const run = await harness.runTurn({
      steps: [
        {
          toolCalls: [
            { name: 'calculator', arguments: { expression: '6*7' } },
            { name: 'missing', arguments: {} },
          ],
        },
        { text: '42' },
      ],
    });
    const turn = await harness.api.get(`/v1/turns/${run.turnId}`);
    expect(turn.status).toBe(200);
    expect(turn.body).toMatchObject({ status: 'completed', step: 2, partialToolCalls: [] });
    const ids = eventsOfType(run.events, 'tool-call-end').map((event) => event.toolCallId);
    expect(turn.body.toolCalls).toEqual([
      expect.objectContaining({
        toolCallId: ids[0],
        step: 1,
        toolName: 'calculator',
        kind: 'builtin',
        args: { expression: '6*7' },
        argumentsText: '{"expression":"6*7"}',
        status: 'succeeded',
        attempts: 1,
        result: expect.anything(),
        durationMs: expect.any(Number),
      }),
      expect.objectContaining({
        toolCallId: ids[1],
        toolName: 'missing',
        kind: 'http',
        status: 'failed',
        attempts: 1,
        error: { code: 'http_error', status: 404, message: 'no such thing' },
      }),
    ]);
    expect(turn.body.toolCalls[1]).not.toHaveProperty('result');
  });

  describe('POST /v1/tools/:name/invoke', () => {
    it('runs a tool with valid params', async () => {
      const invoked = await harness.api.post('/v1/tools/create_ticket/invoke', { params: { title: 'Direct' } });
      expect(invoked.status).toBe(200);
      expect(invoked.body).toEqual({ result: { id: 'T-1', title: 'Direct' }, attempts: 1, durationMs: expect.any(Number) });
      const echoed = await harness.api.post('/v1/tools/everything__echo/invoke', { params: { message: 'direct' } });
      expect(echoed.body.result).toEqual({ content: [{ type: 'text', text: 'Echo: direct' }] });
    });

    it('answers params that fail the schema with 400 naming the problem, and runs nothing', async () => {
      const before = server.requests.length;
      const wrong = await harness.api.post('/v1/tools/create_ticket/invoke', { params: { title: 'x', priority: 9 } });
      expect(wrong.status).toBe(400);
      expect(wrong.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringContaining('priority') });
      const missing = await harness.api.post('/v1/tools/create_ticket/invoke', { params: {} });
      expect(missing.status).toBe(400);
      expect(missing.body.error.message).toContain('title');
      const notAnObject = await harness.api.post('/v1/tools/create_ticket/invoke', { params: 'title' });
      expect(notAnObject.status).toBe(400);
      expect(server.requests.length).toBe(before);
    });

    it('runs an invocation once per Idempotency-Key: a repeat, also at the same moment, gets the stored result', async () => {
      const tickets = () => server.requests.filter((request) => request.path === '/tickets');
      const before = tickets().length;
      const invoke = (params: unknown, key: string) => harness.api.post('/v1/tools/create_ticket/invoke', { params }, { 'idempotency-key': key });
      const [first, same] = await Promise.all([invoke({ title: 'Once' }, 'ticket-42'), invoke({ title: 'Once' }, 'ticket-42')]);
      expect(first).toMatchObject({ status: 200, body: { result: { id: 'T-1', title: 'Once' }, attempts: 1 } });
      expect(same.body).toEqual(first.body);
      const again = await invoke({ title: 'Once' }, 'ticket-42');
      expect(again.body).toEqual(first.body);
      expect(tickets().length).toBe(before + 1);
      // The tool gets a key derived from the caller's: the same for every repeat, not the caller's own.
      const downstream = String(tickets().at(-1)!.headers['idempotency-key']);
      expect(downstream).toMatch(/^inv_[0-9a-f]{32}:invoke$/);
      expect(downstream).not.toContain('ticket-42');

      const conflict = await invoke({ title: 'Twice' }, 'ticket-42');
      expect(conflict).toMatchObject({ status: 409, body: { error: { code: 'idempotency_conflict' } } });
      expect(tickets().length).toBe(before + 1);
      // Another user's same key is another invocation.
      const other = await harness.stack.createUser('other-invoker');
      const theirs = await apiClient(harness.stack.url, other.apiKey).post('/v1/tools/create_ticket/invoke', { params: { title: 'Theirs' } }, { 'idempotency-key': 'ticket-42' });
      expect(theirs).toMatchObject({ status: 200, body: { result: { title: 'Theirs' } } });
    });

    it('runs again an invocation whose job failed for good, when its key is repeated', async () => {
      const { stack } = harness;
      const user = await stack.createUser('failed-invoker');
      const id = invocationIdFor(user.id, 'after-an-outage');
      // The invocation's job as an outage that outlasted its attempts leaves it: failed for good,
      // its id kept for days. No worker of the stack may take it meanwhile.
      for (const worker of [...stack.workers]) await stack.stopWorker(worker);
      const taker = new Worker(TOOL_QUEUE, undefined, { connection: { url: stack.config.REDIS_URL, maxRetriesPerRequest: null }, prefix: stack.resources.queuePrefix });
      try {
        await enqueueInvocation(stack.resources.toolQueue, id);
        const job = (await taker.getNextJob('test-token'))!;
        expect(job.id).toBe(`invoke-${id}`);
        await job.moveToFailed(new UnrecoverableError('postgres is unavailable'), 'test-token');
        expect(await job.getState()).toBe('failed');
      } finally {
        await taker.close();
        await stack.addWorker();
      }
      const tickets = () => server.requests.filter((request) => request.path === '/tickets');
      const before = tickets().length;
      const invoked = await apiClient(stack.url, user.apiKey).post('/v1/tools/create_ticket/invoke', { params: { title: 'Late' } }, { 'idempotency-key': 'after-an-outage' });
      expect(invoked).toMatchObject({ status: 200, body: { result: { title: 'Late' }, attempts: 1 } });
      expect(tickets().length).toBe(before + 1);
    });

    it('answers an unknown tool with 404, a client tool with 400 and a failing tool with 502 tool_failed', async () => {
      const unknown = await harness.api.post('/v1/tools/no_such_tool/invoke', { params: {} });
      expect(unknown.status).toBe(404);
      expect(unknown.body.error.code).toBe('not_found');
      expect((await harness.api.post('/v1/tools/confirm/invoke', { params: {} })).status).toBe(400);
      const failed = await harness.api.post('/v1/tools/missing/invoke', { params: {} });
      expect(failed.status).toBe(502);
      expect(failed.body.error).toMatchObject({ code: 'tool_failed', details: { code: 'http_error', status: 404, attempts: 1 } });
    });
  });
});
