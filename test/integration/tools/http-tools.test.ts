import { createHttpTool } from '../../../src/tools/http/http-tool';
import { loadToolRegistry } from '../../../src/tools/tool-registry';
import type { ToolRegistry } from '../../../src/tools/tool';
import { startToolHttpServer, writeToolsDir, type ToolHttpServer } from '../../support/tool-servers';

describe('http tools against a real HTTP server', () => {
  let server: ToolHttpServer;
  let registry: ToolRegistry | undefined;
  const context = (toolCallId = 'call_1') => ({ turnId: 'turn_9', toolCallId, attempt: 1, signal: new AbortController().signal });

  beforeEach(async () => {
    server = await startToolHttpServer();
  });
  afterEach(async () => {
    await registry?.close();
    registry = undefined;
    await server.close();
  });

  const load = async (tools: unknown[], env: Record<string, string | undefined> = {}) => {
    const toolsDir = await writeToolsDir({ 'tools.json': { tools } });
    registry = await loadToolRegistry({ toolsDir, env, builtins: [] });
    return registry;
  };

  it('POSTs the arguments as JSON with the Idempotency-Key <turnId>:<toolCallId>, the same on every attempt', async () => {
    const tools = await load([
      {
        name: 'create_ticket',
        description: 'Creates a ticket',
        url: `${server.url}/tickets`,
        fields: [
          { name: 'title', required: true },
          { name: 'priority', type: 'integer' },
        ],
      },
    ]);
    const outcome = await tools.execute('create_ticket', { title: 'Printer on fire', priority: 1 }, context('call_7'));
    expect(outcome).toEqual({ ok: true, result: { method: 'POST', path: '/tickets', query: {}, body: { title: 'Printer on fire', priority: 1 } } });
    await tools.execute('create_ticket', { title: 'Printer on fire', priority: 1 }, { ...context('call_7'), attempt: 2 });
    expect(server.requests.map((request) => request.headers['idempotency-key'])).toEqual(['turn_9:call_7', 'turn_9:call_7']);
    expect(server.requests[0]!.headers['content-type']).toBe('application/json');
    expect(server.requests[0]!.bodyText).toBe('{"title":"Printer on fire","priority":1}');
  });

  it('sends GET arguments as a query string, objects and arrays JSON-encoded, keeping the URL query', async () => {
    const tools = await load([{ name: 'search', description: 'Search', url: `${server.url}/search?v=2`, method: 'GET', inputSchema: { type: 'object' } }]);
    await tools.execute('search', { q: 'red shoes', limit: 5, exact: false, tags: ['a', 'b'], filter: { size: 42 } }, context());
    const [request] = server.requests;
    expect(request).toMatchObject({ method: 'GET', path: '/search', bodyText: '' });
    expect(request!.query).toEqual({ v: '2', q: 'red shoes', limit: '5', exact: 'false', tags: '["a","b"]', filter: '{"size":42}' });
    expect(request!.headers['idempotency-key']).toBe('turn_9:call_1');
  });

  it('sends headers with ${ENV_VAR} resolved from the env it was given', async () => {
    const tools = await load([{ name: 'secure', description: 'Secure', url: `${server.url}/secure`, headers: { Authorization: 'Bearer ${TOOL_TOKEN}', 'X-Static': 'yes' } }], {
      TOOL_TOKEN: 'tok-123',
    });
    await tools.execute('secure', {}, context());
    expect(server.requests[0]!.headers).toMatchObject({ authorization: 'Bearer tok-123', 'x-static': 'yes' });
    expect(JSON.stringify(tools.list())).not.toContain('tok-123');
  });

  it('answers a 500 with a retryable http_error carrying the status and the start of the body', async () => {
    const tools = await load([{ name: 'flaky', description: 'Flaky', url: `${server.url}/flaky` }]);
    server.failNext(1, { status: 500, body: 'x'.repeat(2000) });
    const failed = await tools.execute('flaky', {}, context());
    expect(failed).toEqual({ ok: false, error: { code: 'http_error', status: 500, message: 'x'.repeat(500), retryable: true } });
    expect(await tools.execute('flaky', {}, context())).toMatchObject({ ok: true });
  });

  it('retries 408 and 429 but not 404 or 400', async () => {
    const tools = await load([{ name: 'api', description: 'API', url: `${server.url}/api` }]);
    const statusOutcome = async (status: number) => {
      server.failNext(1, { status, body: { error: 'nope' } });
      const outcome = await tools.execute('api', {}, context());
      return !outcome.ok && [outcome.error.code, outcome.error.status, outcome.error.retryable];
    };
    expect(await statusOutcome(404)).toEqual(['http_error', 404, false]);
    expect(await statusOutcome(400)).toEqual(['http_error', 400, false]);
    expect(await statusOutcome(408)).toEqual(['http_error', 408, true]);
    expect(await statusOutcome(429)).toEqual(['http_error', 429, true]);
    expect(await statusOutcome(503)).toEqual(['http_error', 503, true]);
  });

  it('gives up on a hung request at timeoutMs with a retryable timeout', async () => {
    const tools = await load([{ name: 'slow', description: 'Slow', url: `${server.url}/slow`, timeoutMs: 200 }]);
    server.hangNext(1);
    const started = Date.now();
    expect(await tools.execute('slow', {}, context())).toEqual({ ok: false, error: { code: 'timeout', message: 'no result within 200 ms', retryable: true } });
    // Not before its time; how soon after it is `npm run bench -- deadlines`.
    expect(Date.now() - started).toBeGreaterThanOrEqual(190);
    expect(server.requests).toHaveLength(1);
  });

  it('returns a JSON body parsed and any other body as text', async () => {
    const tools = await load([
      { name: 'json', description: 'JSON', url: `${server.url}/json` },
      { name: 'text', description: 'Text', url: `${server.url}/text` },
      { name: 'empty', description: 'Empty', url: `${server.url}/empty` },
    ]);
    server.route('/json', { body: { temperature: 21.5, unit: 'c' }, contentType: 'application/json; charset=utf-8' });
    server.route('/text', { body: '{"looks":"like json"}', contentType: 'text/plain' });
    server.route('/empty', { status: 204 });
    expect(await tools.execute('json', {}, context())).toEqual({ ok: true, result: { temperature: 21.5, unit: 'c' } });
    expect(await tools.execute('text', {}, context())).toEqual({ ok: true, result: '{"looks":"like json"}' });
    expect(await tools.execute('empty', {}, context())).toEqual({ ok: true, result: null });
  });

  it('does not follow a redirect, so configured headers never reach another host', async () => {
    const tools = await load([{ name: 'moved', description: 'Moved', url: `${server.url}/old`, headers: { 'X-Api-Key': 'k' } }]);
    server.route('/old', { status: 302, headers: { location: 'http://elsewhere.example/new' } });
    expect(await tools.execute('moved', {}, context())).toEqual({
      ok: false,
      error: { code: 'http_error', status: 302, message: 'redirected to http://elsewhere.example/new; redirects are not followed, configure the final URL', retryable: false },
    });
    expect(server.requests).toHaveLength(1);
  });

  it('never puts the credentials of a URL in an error, neither from a redirect nor from a failed request', async () => {
    const tools = await load([{ name: 'moved', description: 'Moved', url: `${server.url}/old` }]);
    server.route('/old', { status: 302, headers: { location: 'http://admin:hunter2@elsewhere.example/new' } });
    expect(await tools.execute('moved', {}, context())).toMatchObject({
      ok: false,
      error: { code: 'http_error', message: 'redirected to http://***@elsewhere.example/new; redirects are not followed, configure the final URL' },
    });
    // Tool files cannot declare such a URL (loading refuses it); a tool built in code still never echoes one.
    const direct = createHttpTool({
      kind: 'http',
      name: 'direct',
      description: 'Direct',
      url: `http://admin:hunter2@127.0.0.1:${new URL(server.url).port}/direct`,
      method: 'POST',
      headers: {},
      timeoutMs: 5_000,
      retries: 0,
      inputSchema: { type: 'object' },
      source: 'code',
    });
    const failed = await direct.execute({}, context());
    expect(failed).toMatchObject({ ok: false, error: { code: 'network_error' } });
    expect(JSON.stringify(failed)).not.toMatch(/hunter2|admin/);
  });

  it('refuses a response body over the cap', async () => {
    const toolsDir = await writeToolsDir({ 'big.json': { name: 'big', description: 'Big', url: `${server.url}/big` } });
    registry = await loadToolRegistry({ toolsDir, env: {}, builtins: [], http: { maxResponseBytes: 1_000 } });
    server.route('/big', { body: 'y'.repeat(5_000) });
    expect(await registry.execute('big', {}, context())).toMatchObject({ ok: false, error: { code: 'response_too_large', retryable: false } });
  });

  it('reports a refused connection as a retryable network error', async () => {
    const closed = await startToolHttpServer();
    await closed.close();
    const tools = await load([{ name: 'gone', description: 'Gone', url: `${closed.url}/gone` }]);
    expect(await tools.execute('gone', {}, context())).toMatchObject({
      ok: false,
      error: { code: 'network_error', message: expect.stringMatching(/ECONNREFUSED/), retryable: true },
    });
  });

  it('stops the request when the caller cancels', async () => {
    const tools = await load([{ name: 'slow', description: 'Slow', url: `${server.url}/slow`, timeoutMs: 10_000 }]);
    server.hangNext(1);
    const controller = new AbortController();
    const pending = tools.execute('slow', {}, { ...context(), signal: controller.signal });
    await server.waitForRequests(1);
    controller.abort();
    expect(await pending).toEqual({ ok: false, error: { code: 'cancelled', message: 'the call was cancelled', retryable: false } });
  });

  it('answers a client tool with client_tool and never calls anything', async () => {
    const tools = await load([{ kind: 'client', name: 'confirm', description: 'Ask the user', fields: [{ name: 'question', required: true }] }]);
    expect(tools.get('confirm')).toMatchObject({ kind: 'client', timeoutMs: 300_000, retries: 0 });
    expect(tools.checkArguments('confirm', '{"question":"Sure?"}')).toEqual({ ok: true, args: { question: 'Sure?' } });
    expect(await tools.execute('confirm', { question: 'Sure?' }, context())).toMatchObject({ ok: false, error: { code: 'client_tool', retryable: false } });
    expect(server.requests).toHaveLength(0);
  });
});
