import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { followBatchEvents } from '../support/batch-events';
import { servedRoutes } from '../support/express-routes';
import { apiClient, type ApiResponse } from '../support/http';
import { startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';

const ADMIN_TOKEN = 'admin-token-for-openapi-tests';
const validateApi = path.join(__dirname, '../../node_modules/.bin/validate-api');

describe('GET /openapi.json', () => {
  let harness: ToolTurnHarness;
  let document: any;
  let expectDocumented: ReturnType<typeof answerChecker>;

  beforeAll(async () => {
    harness = await startToolTurnHarness({ env: { ADMIN_TOKEN } });
    const response = await fetch(`${harness.stack.url}/openapi.json`, { headers: { origin: 'https://docs.example' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('access-control-allow-origin')).toBe('*');
    document = await response.json();
    expectDocumented = answerChecker(document);
  });
  afterAll(() => harness.close());

  it('is served without credentials, and is a valid OpenAPI 3.1 document by an OpenAPI validator', async () => {
    expect(document).toMatchObject({ openapi: '3.1.0', info: { title: 'Switchyard' } });
    expect(await validate(document)).toEqual({ valid: true });
    // The same validator refuses a broken document: it does check.
    const broken = { ...document, paths: { '/v1/tools': { get: { responses: { '200': { content: {} } } } } } };
    expect(await validate(broken)).toMatchObject({ valid: false });
  });

  it('documents every route the app serves, and no route it does not', () => {
    const documented = Object.entries(document.paths).flatMap(([route, methods]) => Object.keys(methods as object).map((method) => `${method} ${route}`));
    const served = servedRoutes(harness.stack.api.app).map(({ method, path: route }) => `${method} ${route}`);
    // Besides the express routes: the websocket gateway's upgrade, and the playground's static files.
    expect(documented.sort()).toEqual([...served, 'get /v1/ws', 'get /'].sort());
  });

  it('lists the error codes each route answers, and the credentials it takes', () => {
    const codes = (route: string, method: string, status: string) =>
      document.paths[route][method].responses[status].content['application/json'].schema.properties.error.properties.code.enum;
    expect(codes('/v1/conversations/{id}/turns', 'post', '409')).toEqual(['conversation_busy', 'idempotency_conflict', 'conflict']);
    expect(codes('/v1/conversations/{id}', 'get', '404')).toEqual(['not_found']);
    expect(codes('/v1/tools/{name}/invoke', 'post', '502')).toEqual(['tool_failed']);
    expect(codes('/v1/batches', 'post', '413')).toEqual(['payload_too_large']);
    expect(document.paths['/v1/conversations'].post.responses['429'].headers['Retry-After']).toBeDefined();
    // A session token may cancel a turn but not list tools (session-scope.ts): 403 there.
    expect(document.paths['/v1/turns/{id}/cancel'].post.security).toEqual([{ apiKey: [] }, { sessionToken: [] }]);
    expect(document.paths['/v1/turns/{id}/cancel'].post.responses['403']).toBeUndefined();
    expect(document.paths['/v1/tools'].get.security).toEqual([{ apiKey: [] }]);
    expect(codes('/v1/tools', 'get', '403')).toEqual(['forbidden']);
    // Where a session token is taken, its expiry is a 401 of its own.
    expect(codes('/v1/conversations', 'post', '401')).toEqual(['unauthorized', 'token_expired']);
    expect(codes('/v1/tools', 'get', '401')).toEqual(['unauthorized']);
    expect(document.paths['/v1/admin/users'].post.security).toEqual([{ adminToken: [] }]);
    expect(document.paths['/healthz'].get.security).toEqual([]);
  });

  it('lists on every /openai/v1 route the 403 a session token gets there, in the shape it is answered', async () => {
    const openAiOperations = Object.entries(document.paths)
      .filter(([route]) => route.startsWith('/openai/v1/'))
      .flatMap(([route, methods]) => Object.entries(methods as Record<string, any>).map(([method, operation]) => ({ route, method, operation })));
    expect(openAiOperations.length).toBeGreaterThan(5);
    for (const { route, method, operation } of openAiOperations) {
      expect([`${method} ${route}`, operation.security]).toEqual([`${method} ${route}`, [{ apiKey: [] }]]);
      expect([`${method} ${route}`, operation.responses['403']?.content['application/json'].schema]).toEqual([`${method} ${route}`, { $ref: '#/components/schemas/OpenAiError' }]);
    }
    const { token } = (await harness.api.post('/v1/session-tokens', { ttlSeconds: 600 })).body;
    const withSession = apiClient(harness.stack.url, token);
    const refused = await withSession.get('/openai/v1/responses/resp_any');
    expectDocumented('get', '/openai/v1/responses/{id}', refused, 403);
    expect(refused.body.error).toMatchObject({ type: 'permission_error', code: 'forbidden' });
    expectDocumented('post', '/openai/v1/responses', await withSession.post('/openai/v1/responses', { input: 'hi' }), 403);
  });

  it("has the events and websocket frames in components.schemas, and a turn's frames match them", async () => {
    expect(Object.keys(document.components.schemas)).toEqual(expect.arrayContaining(['Event', 'ServerFrame', 'ClientFrame', 'ErrorResponse']));
    const run = await harness.runTurn({ steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }] }, { text: 'It is 42.' }] });
    expect(run.events.map((event) => event.type)).toEqual(expect.arrayContaining(['tool-call-end', 'tool_processing_start', 'tool-result', 'turn-finish']));
    for (const frame of run.client.frames) expectDocumented.component('ServerFrame', frame);
    for (const frame of [
      { type: 'subscribe', conversationId: run.conversationId, after: 0 },
      { type: 'tool-result', turnId: run.turnId, toolCallId: 'call_1', result: 42 },
      { type: 'ping' },
    ]) {
      expectDocumented.component('ClientFrame', frame);
    }
    expect(() => expectDocumented.component('ClientFrame', { type: 'subscribe', conversationId: 'c', after: -1 })).toThrow();
  });

  describe('real answers match the document', () => {
    it('conversations and turns: create, list, get one, post a turn, get it, cancel it', async () => {
      const { api } = harness;
      const created = await api.post('/v1/conversations', { title: 'documented', metadata: { a: 1 }, externalId: 'doc-1' });
      expectDocumented('post', '/v1/conversations', created, 201);
      expectDocumented('get', '/v1/conversations', await api.get('/v1/conversations?limit=1'), 200);

      const run = await harness.runTurn(
        { steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] }, { text: 'Two.' }] },
        {
          conversationId: created.body.id,
        },
      );
      const turn = await api.get(`/v1/turns/${run.turnId}`);
      expectDocumented('get', '/v1/turns/{id}', turn, 200);
      expect(turn.body.toolCalls).toHaveLength(1);
      const conversation = await api.get(`/v1/conversations/${created.body.id}`);
      expectDocumented('get', '/v1/conversations/{id}', conversation, 200);
      expect(conversation.body.messages.map((message: any) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
      expectDocumented('post', '/v1/turns/{id}/cancel', await api.post(`/v1/turns/${run.turnId}/cancel`), 200);

      const posted = await api.post(`/v1/conversations/${created.body.id}/turns`, { content: 'again', idempotencyKey: 'k1' });
      expectDocumented('post', '/v1/conversations/{id}/turns', posted, 202);
      expectDocumented('post', '/v1/conversations/{id}/turns', await api.post(`/v1/conversations/${created.body.id}/turns`, { content: 'again', idempotencyKey: 'k1' }), 200);
      expectDocumented('post', '/v1/conversations/{id}/turns', await api.post(`/v1/conversations/${created.body.id}/turns`, { content: 'other', idempotencyKey: 'k1' }), 409);
    });

    it('approvals: the pending list, a decision, the same one again and a contrary one', async () => {
      const { api } = harness;
      const conversationId = await harness.newConversation({ requireApproval: ['calculator'] });
      const client = await harness.subscribe(conversationId);
      const { turnId } = await harness.postTurn(conversationId, { steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '1+2' } }] }, { text: 'Three.' }] });
      const { event } = await client.waitFor((frame) => frame.type === 'event' && frame.event.turnId === turnId && frame.event.type === 'tool-approval-request');
      const pending = await api.get(`/v1/approvals?conversationId=${conversationId}`);
      expectDocumented('get', '/v1/approvals', pending, 200);
      expect(pending.body.data).toEqual([expect.objectContaining({ turnId, toolCallId: event.toolCallId })]);
      const decision = { toolCallId: event.toolCallId, approved: true, reason: 'fine' };
      expectDocumented('post', '/v1/turns/{id}/approvals', await api.post(`/v1/turns/${turnId}/approvals`, decision), 200);
      expectDocumented('post', '/v1/turns/{id}/approvals', await api.post(`/v1/turns/${turnId}/approvals`, decision), 200);
      expectDocumented('post', '/v1/turns/{id}/approvals', await api.post(`/v1/turns/${turnId}/approvals`, { ...decision, approved: false }), 409);
      await client.waitForTurnEnd(turnId);
    });

    it("a chat's stored history as UIMessage[]: a turn with a tool call, and a chat not used yet", async () => {
      const { api } = harness;
      await harness.runTurn(
        { steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '2*3' } }] }, { text: 'Six.' }] },
        {
          conversation: { externalId: 'doc-chat' },
        },
      );
      const history = await api.get('/api/chat/doc-chat/messages');
      expectDocumented('get', '/api/chat/{id}/messages', history, 200);
      expect(history.body.map((message: any) => message.role)).toEqual(['user', 'assistant']);
      expect(history.body[1]).toMatchObject({ metadata: { turnStatus: 'completed' } });
      expect(history.body[1].parts.map((part: any) => part.type)).toEqual(expect.arrayContaining(['step-start', 'tool-calculator', 'data-tool-processing', 'text']));
      const unused = await api.get('/api/chat/doc-chat-unused/messages');
      expectDocumented('get', '/api/chat/{id}/messages', unused, 200);
      expect(unused.body).toEqual([]);
    });

    it('errors: 404, 400 with details, 409 with details, 401', async () => {
      const { api } = harness;
      expectDocumented('get', '/v1/conversations/{id}', await api.get('/v1/conversations/conv_nobody'), 404);
      const invalid = await api.post('/v1/conversations', { title: 7, colour: 'red' });
      expectDocumented('post', '/v1/conversations', invalid, 400);
      expect(invalid.body.error.details).toEqual([
        { field: 'title', message: expect.any(String) },
        { field: 'colour', message: 'is not a known field' },
      ]);
      expectDocumented('post', '/v1/conversations', await api.post('/v1/conversations', { externalId: 'doc-taken' }), 201);
      expectDocumented('post', '/v1/conversations', await api.post('/v1/conversations', { externalId: 'doc-taken' }), 409);
      expectDocumented('get', '/v1/tools', await apiClient(harness.stack.url).get('/v1/tools'), 401);
      expectDocumented('post', '/v1/turns/{id}/tool-results', await api.post('/v1/turns/turn_nobody/tool-results', { toolCallId: 'x', result: 1 }), 404);
    });

    it('tools: the list, an invocation, a refused one', async () => {
      const { api } = harness;
      const tools = await api.get('/v1/tools');
      expectDocumented('get', '/v1/tools', tools, 200);
      expect(tools.body.tools.map((tool: any) => tool.name)).toContain('calculator');
      expectDocumented('post', '/v1/tools/{name}/invoke', await api.post('/v1/tools/calculator/invoke', { params: { expression: '2+3' } }), 200);
      expectDocumented('post', '/v1/tools/{name}/invoke', await api.post('/v1/tools/calculator/invoke', { params: { nothing: 1 } }), 400);
      expectDocumented('post', '/v1/tools/{name}/invoke', await api.post('/v1/tools/no_such_tool/invoke', { params: {} }), 404);
    });

    it('a batch: submitted, listed, read, its results and its retry', async () => {
      const { api } = harness;
      const submitted = await api.post('/v1/batches', { items: [{ customId: 'one', messages: ['hello'] }, { messages: ['world'] }], metadata: { run: 1 } });
      expectDocumented('post', '/v1/batches', submitted, 202);
      const events = await followBatchEvents(harness.stack.url, harness.apiKey, submitted.body.batchId);
      await events.finished().finally(() => events.close());
      expectDocumented('get', '/v1/batches/{id}', await api.get(`/v1/batches/${submitted.body.batchId}`), 200);
      expectDocumented('get', '/v1/batches', await api.get('/v1/batches'), 200);
      expectDocumented('post', '/v1/batches/{id}/retry', await api.post(`/v1/batches/${submitted.body.batchId}/retry`), 200);
      const results = await api.get(`/v1/batches/${submitted.body.batchId}/results`);
      expect(results.status).toBe(200);
      const lines = String(results.body)
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(lines).toHaveLength(2);
      for (const line of lines) expectDocumented('get', '/v1/batches/{id}/results', { ...results, body: line }, 200, 'application/x-ndjson');
      const refused = await api.post('/v1/batches', { items: [{ messages: [] }] });
      expectDocumented('post', '/v1/batches', refused, 400);
      expect(refused.body.error.details).toEqual([expect.objectContaining({ line: 1 })]);
    });

    it('admin, session tokens, websocket tickets, health and readiness', async () => {
      const admin = apiClient(harness.stack.url, ADMIN_TOKEN);
      const user = await admin.post('/v1/admin/users', { name: 'documented' });
      expectDocumented('post', '/v1/admin/users', user, 201);
      expectDocumented('get', '/v1/admin/users/{id}/keys', await admin.get(`/v1/admin/users/${user.body.id}/keys`), 200);
      expectDocumented('put', '/v1/admin/users/{id}/tools', await admin.put(`/v1/admin/users/${user.body.id}/tools`, { tools: ['calculator'] }), 200);
      expectDocumented('post', '/v1/admin/users', await apiClient(harness.stack.url, 'wrong').post('/v1/admin/users', { name: 'x' }), 401);
      expectDocumented('post', '/v1/session-tokens', await harness.api.post('/v1/session-tokens', { ttlSeconds: 600 }), 201);
      expectDocumented('post', '/v1/ws-tickets', await harness.api.post('/v1/ws-tickets'), 201);
      expectDocumented('get', '/healthz', await harness.api.get('/healthz'), 200);
      expectDocumented('get', '/readyz', await harness.api.get('/readyz'), 200);
    });
  });
});

/** Runs the OpenAPI validator's own command on the document, as CI would on a file. */
async function validate(document: unknown): Promise<unknown> {
  const dir = await mkdtemp(path.join(tmpdir(), 'openapi-'));
  try {
    const file = path.join(dir, 'openapi.json');
    await writeFile(file, JSON.stringify(document));
    const { stdout } = await promisify(execFile)(validateApi, [file]).catch((failure: { stdout: string }) => failure);
    return JSON.parse(stdout);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/**
 * Checks answers against the document's response schemas. The document leaves answers open to
 * fields added later; here every object is closed, so that a field a route sends without the
 * document naming it fails the test.
 */
function answerChecker(document: any) {
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(closeObjects(structuredClone(document)) as object, 'openapi.json');
  const check = (pointer: string[], value: unknown, what: string) => {
    const validator = ajv.getSchema(`openapi.json#/${pointer.map((part) => encodeURIComponent(part.replace(/~/g, '~0').replace(/\//g, '~1'))).join('/')}`);
    if (!validator) throw new Error(`the document has no schema for ${what}`);
    if (!validator(value)) throw new Error(`${what} does not match the document: ${ajv.errorsText(validator.errors)}\n${JSON.stringify(value).slice(0, 2_000)}`);
  };
  const expectDocumented = (method: string, route: string, response: ApiResponse, status: number, mediaType = 'application/json') => {
    expect(response.status).toBe(status);
    check(['paths', route, method, 'responses', String(status), 'content', mediaType, 'schema'], response.body, `${method.toUpperCase()} ${route} ${status}`);
  };
  expectDocumented.component = (name: string, value: unknown) => check(['components', 'schemas', name], value, name);
  return expectDocumented;
}

function closeObjects(node: unknown): unknown {
  if (Array.isArray(node)) node.forEach(closeObjects);
  else if (node && typeof node === 'object') {
    const schema = node as Record<string, unknown>;
    if (schema.type === 'object' && schema.properties && !('additionalProperties' in schema)) schema.additionalProperties = false;
    Object.values(schema).forEach(closeObjects);
  }
  return node;
}
