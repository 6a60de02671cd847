import { apiClient } from '../support/http';
import { startTestStack, type TestStack } from '../support/stack';
import { TestWsClient } from '../support/ws-client';
import { runToExit } from '../support/processes';

describe('API boundaries', () => {
  let stack: TestStack;
  let alice: ReturnType<typeof apiClient>;
  let bob: ReturnType<typeof apiClient>;
  let aliceKey: string;
  let bobKey: string;
  let aliceConversation: string;

  beforeAll(async () => {
    stack = await startTestStack({ env: { MAX_BODY_BYTES: '10000', ADMIN_TOKEN: 'admin-token-for-tests-0123' } });
    aliceKey = (await stack.createUser('alice')).apiKey;
    bobKey = (await stack.createUser('bob')).apiKey;
    alice = apiClient(stack.url, aliceKey);
    bob = apiClient(stack.url, bobKey);
    aliceConversation = (await alice.post('/v1/conversations', { title: 'private' })).body.id;
  });
  afterAll(() => stack.close());

  describe('isolation between users', () => {
    it("answers 404 to another user's conversation, exactly as to a missing one", async () => {
      const foreign = await bob.get(`/v1/conversations/${aliceConversation}`);
      const missing = await bob.get('/v1/conversations/conv_does_not_exist');
      expect(foreign.status).toBe(404);
      expect(foreign.body).toEqual({ error: { ...missing.body.error, message: foreign.body.error.message } });
      expect(foreign.body.error.code).toBe('not_found');
      expect((await bob.post(`/v1/conversations/${aliceConversation}/turns`, { content: 'hi' })).status).toBe(404);
      const list = await bob.get('/v1/conversations');
      expect(list.body.data).toEqual([]);
    });

    it("hides another user's turn and refuses to cancel it", async () => {
      const turn = await alice.post(`/v1/conversations/${aliceConversation}/turns`, { content: 'hello' });
      expect((await bob.get(`/v1/turns/${turn.body.turnId}`)).status).toBe(404);
      expect((await bob.post(`/v1/turns/${turn.body.turnId}/cancel`)).status).toBe(404);
      expect((await bob.get(`/v1/turns/${turn.body.turnId}/events`)).status).toBe(404);
    });

    it("answers not_found to a websocket subscription to another user's conversation, with no event", async () => {
      const client = await TestWsClient.connect(stack.url, { apiKey: bobKey });
      client.send({ type: 'subscribe', conversationId: aliceConversation, after: 0 });
      const error = await client.waitFor((frame) => frame.type === 'error');
      expect(error).toMatchObject({ code: 'not_found', conversationId: aliceConversation });
      client.send({ type: 'ping' });
      await client.waitFor((frame) => frame.type === 'pong');
      expect(client.events()).toEqual([]);
      client.close();
    });
  });

  describe('authentication', () => {
    it('answers 401 without a key or with a wrong one', async () => {
      expect((await apiClient(stack.url).get('/v1/conversations')).status).toBe(401);
      const wrong = await apiClient(stack.url, 'sy_not_a_real_key').get('/v1/conversations');
      expect(wrong.status).toBe(401);
      expect(wrong.body.error.code).toBe('unauthorized');
    });

    it('refuses a websocket handshake without credentials with 401', async () => {
      await expect(TestWsClient.connect(stack.url, {})).rejects.toThrow('HTTP 401');
    });

    it('accepts a ticket once', async () => {
      const { body } = await alice.post('/v1/ws-tickets');
      const client = await TestWsClient.connect(stack.url, { ticket: body.ticket });
      client.close();
      await expect(TestWsClient.connect(stack.url, { ticket: body.ticket })).rejects.toThrow('HTTP 401');
    });

    it('makes users through the admin route only with the admin token', async () => {
      expect((await apiClient(stack.url, 'wrong-token').post('/v1/admin/users', { name: 'x' })).status).toBe(401);
      const made = await apiClient(stack.url, 'admin-token-for-tests-0123').post('/v1/admin/users', { name: 'carol' });
      expect(made.status).toBe(201);
      expect(made.body).toMatchObject({ name: 'carol', apiKey: expect.stringMatching(/^sy_/) });
      expect((await apiClient(stack.url, made.body.apiKey).get('/v1/conversations')).status).toBe(200);
    });

    it("answers a new user's key id, and lists a user's keys without the keys themselves", async () => {
      const admin = apiClient(stack.url, 'admin-token-for-tests-0123');
      const made = await admin.post('/v1/admin/users', { name: 'erin' });
      expect(made.body).toMatchObject({ id: expect.stringMatching(/^user_/), keyId: expect.stringMatching(/^key_/) });
      const second = await stack.resources.users.createApiKey(made.body.id);
      await stack.resources.users.revokeApiKey(second.id);

      const listed = await admin.get(`/v1/admin/users/${made.body.id}/keys`);
      expect(listed.status).toBe(200);
      expect(listed.body.data).toEqual([
        { id: made.body.keyId, name: null, prefix: made.body.apiKey.slice(0, 9), createdAt: expect.any(String), lastUsedAt: null },
        { id: second.id, name: null, prefix: second.apiKey.slice(0, 9), createdAt: expect.any(String), lastUsedAt: null, revokedAt: expect.any(String) },
      ]);
      expect(JSON.stringify(listed.body)).not.toContain(made.body.apiKey);
      expect((await admin.get('/v1/admin/users/user_nobody/keys')).status).toBe(404);
      expect((await apiClient(stack.url, 'wrong-token').get(`/v1/admin/users/${made.body.id}/keys`)).status).toBe(401);
    });

    it("limits a user's tools through PUT /v1/admin/users/:id/tools and the CLI, and lifts the limit", async () => {
      const admin = apiClient(stack.url, 'admin-token-for-tests-0123');
      const user = await stack.resources.users.createUserWithKey('dave');
      const toolsOf = async () => ((await apiClient(stack.url, user.apiKey).get('/v1/tools')).body.tools as { name: string }[]).map((tool) => tool.name);
      const everything = await toolsOf();
      expect(everything).toContain('calculator');

      expect((await apiClient(stack.url, 'wrong-token').put(`/v1/admin/users/${user.id}/tools`, { tools: [] })).status).toBe(401);
      expect(await admin.put(`/v1/admin/users/${user.id}/tools`, { tools: ['calculator'] })).toMatchObject({ status: 200, body: { id: user.id, allowedTools: ['calculator'] } });
      expect(await toolsOf()).toEqual(['calculator']);
      expect((await admin.put(`/v1/admin/users/${user.id}/tools`, { tools: 'calculator' })).body.error).toMatchObject({ code: 'invalid_request' });
      expect((await admin.put('/v1/admin/users/user_nobody/tools', { tools: null })).status).toBe(404);
      // A name that is no tool is refused, with the names that are, and the limit stays as it was.
      const unknown = await admin.put(`/v1/admin/users/${user.id}/tools`, { tools: ['calculator', 'calculater'] });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error).toMatchObject({ code: 'invalid_request', details: [{ field: 'tools', message: 'unknown tool "calculater"' }] });
      expect(unknown.body.error.message).toMatch(/^unknown tools: calculater; the known tools are: .*calculator, current_time, random_number/);
      expect(await toolsOf()).toEqual(['calculator']);

      // The CLI does the same on the database; `all` lifts the limit.
      const cli = (...args: string[]) => runToExit('workers/cli.ts', stack.childEnv({ LOG_LEVEL: 'silent' }), ['users', 'tools', ...args]);
      const none = await cli(user.id, '');
      expect([none.code, none.stderr]).toEqual([0, '']);
      expect(JSON.parse(none.stdout)).toEqual({ id: user.id, allowedTools: [] });
      expect(await toolsOf()).toEqual([]);
      expect((await cli(user.id, 'all')).code).toBe(0);
      expect(await toolsOf()).toEqual(everything);
      expect(await cli('user_nobody', 'all')).toMatchObject({ code: 1, stderr: 'no user user_nobody\n' });
      const unknownByCli = await cli(user.id, 'calculator,calculater');
      expect([unknownByCli.code, unknownByCli.stderr]).toEqual([1, 'unknown tools: calculater; the known tools are: calculator, current_time, random_number\n']);
      expect(await toolsOf()).toEqual(everything);
    });
  });

  describe('conversations with an externalId', () => {
    it('answers an externalId already in use with 409 external_id_conflict naming the conversation that has it', async () => {
      const first = await alice.post('/v1/conversations', { externalId: 'chat-taken', title: 'first' });
      expect(first.status).toBe(201);
      const again = await alice.post('/v1/conversations', { externalId: 'chat-taken', title: 'second' });
      expect(again.status).toBe(409);
      expect(again.body.error).toEqual({ code: 'external_id_conflict', message: expect.stringContaining(first.body.id), details: { conversationId: first.body.id } });
      expect((await alice.get('/v1/conversations?externalId=chat-taken')).body.data).toEqual([expect.objectContaining({ id: first.body.id, title: 'first' })]);
      // Unique per user: another user's chat may have the same id.
      const other = apiClient(stack.url, (await stack.createUser('dave')).apiKey);
      expect((await other.post('/v1/conversations', { externalId: 'chat-taken' })).status).toBe(201);
    });

    it('makes one conversation when several with the same externalId arrive at once; the others answer 409 naming it', async () => {
      const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => alice.post('/v1/conversations', { externalId: 'chat-race', title: `racer ${i}` })));
      const made = answers.filter((answer) => answer.status === 201);
      expect(made).toHaveLength(1);
      const refused = answers.filter((answer) => answer.status !== 201);
      expect(refused.map((answer) => [answer.status, answer.body.error.code, answer.body.error.details])).toEqual(
        Array.from({ length: 7 }, () => [409, 'external_id_conflict', { conversationId: made[0]!.body.id }]),
      );
      expect((await alice.get('/v1/conversations?externalId=chat-race')).body.data).toHaveLength(1);
    });
  });

  describe('bad input', () => {
    it('answers malformed JSON with invalid_json', async () => {
      const response = await alice.request('POST', '/v1/conversations', '{"title": ');
      expect(response.status).toBe(400);
      expect(response.body.error.code).toBe('invalid_json');
    });

    it('names unknown and wrongly typed fields', async () => {
      const unknown = await alice.post('/v1/conversations', { title: 'x', colour: 'blue' });
      expect(unknown.status).toBe(400);
      expect(unknown.body.error.code).toBe('invalid_request');
      expect(JSON.stringify(unknown.body.error)).toContain('colour');
      const wrongType = await alice.post(`/v1/conversations/${aliceConversation}/turns`, { content: 42 });
      expect(wrongType.status).toBe(400);
      expect(wrongType.body.error.details.map((d: any) => d.field)).toContain('content');
    });

    it('answers an oversized body with 413', async () => {
      const response = await alice.post('/v1/conversations', { title: 'x'.repeat(20_000) });
      expect(response.status).toBe(413);
      expect(response.body.error.code).toBe('payload_too_large');
    });

    it('answers a body that is not JSON with 415', async () => {
      const response = await alice.request('POST', '/v1/conversations', 'title=x', { 'content-type': 'application/x-www-form-urlencoded' });
      expect(response.status).toBe(415);
      expect(response.body.error.code).toBe('unsupported_media_type');
    });

    it('answers an unknown route with a JSON 404', async () => {
      const response = await alice.get('/v1/nothing-here');
      expect(response.status).toBe(404);
      expect(response.body.error.code).toBe('not_found');
    });

    it('answers a chat stream whose id holds a NUL with 400, and other route ids with a NUL with 404, never a 500', async () => {
      const stream = await alice.get('/api/chat/chat%00nul/stream');
      expect([stream.status, stream.body.error.code]).toEqual([400, 'invalid_request']);
      expect(stream.body.error.details).toEqual([{ field: 'id', message: expect.stringContaining('NUL') }]);
      const loneSurrogate = await alice.get('/api/chat/chat%ED%A0%80/stream');
      expect([loneSurrogate.status, loneSurrogate.body.error.code]).toEqual([400, 'invalid_request']);
      for (const path of ['/v1/conversations/conv%00x', '/v1/turns/turn%00x', '/v1/turns/turn%00x/events', '/v1/batches/batch%00x', '/v1/batches/batch%00x/results']) {
        const answer = await alice.get(path);
        expect([path, answer.status, answer.body.error.code]).toEqual([path, 404, 'not_found']);
      }
      expect((await alice.post('/v1/tools/calc%00ulator/invoke', { params: {} })).status).toBe(404);
    });

    it('answers websocket frames that are malformed, unknown or too large', async () => {
      const client = await TestWsClient.connect(stack.url, { apiKey: aliceKey });
      client.send('{not json');
      expect(await client.waitFor((frame) => frame.type === 'error')).toMatchObject({ code: 'bad_frame' });
      client.send({ type: 'launch-rockets' });
      expect(await client.waitFor((frame) => frame.type === 'error' && frame.code !== 'bad_frame')).toMatchObject({ code: 'unknown_frame' });
      client.send({ type: 'subscribe', conversationId: aliceConversation, after: 1_000_000 });
      expect(await client.waitFor((frame) => frame.type === 'error' && frame.code === 'bad_cursor')).toBeTruthy();
      client.send({ type: 'subscribe', conversationId: 'x'.repeat(200 * 1024) });
      expect((await client.whenClosed()).code).toBe(1009);
    });
  });

  describe('health', () => {
    it('serves healthz, readyz and metrics without auth', async () => {
      const anonymous = apiClient(stack.url);
      expect((await anonymous.get('/healthz')).status).toBe(200);
      const ready = await anonymous.get('/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({
        status: 'ready',
        checks: { redis: { ok: true, latencyMs: expect.any(Number) }, database: { ok: true, latencyMs: expect.any(Number) }, provider: { ok: true } },
      });
      const metrics = await fetch(`${stack.url}/metrics`);
      expect(await metrics.text()).toContain('switchyard_http_requests_total');
    });
  });
});
