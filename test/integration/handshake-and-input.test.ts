import { gzipSync } from 'node:zlib';
import { servedRoutes } from '../support/express-routes';
import { apiClient } from '../support/http';
import { poll } from '../support/poll';
import { rawHandshake } from '../support/raw-websocket';
import { startTestStack, type TestStack } from '../support/stack';
import { TestWsClient } from '../support/ws-client';

const ALLOWED_ORIGIN = 'https://app.example.test';
const TWO_MB = 2 * 1024 * 1024;
const ADMIN_TOKEN = 'admin-token-for-bad-input-tests';

/**
 * Write routes that do not read their body with the API's JSON parser, so the sweep below does not
 * ask them to answer a bad JSON body as it does: each is mounted before that parser.
 */
const NOT_JSON_BODY_ROUTES = [
  // JSON or JSONL up to MAX_BATCH_BYTES, read as a stream with its own 413/415: batch-submission.test.ts.
  'post /v1/batches',
  // Mounted with it, before the parser: they take no body and read none.
  'post /v1/batches/{id}/cancel',
  'post /v1/batches/{id}/retry',
  // A multipart upload with its own limit, and a delete that takes no body, both before the parser.
  'post /openai/v1/files',
  'delete /openai/v1/files/{id}',
];

/**
 * docs/RELIABILITY.md case 21 (credentials and Origin, refused before the upgrade) and case 25 (bad
 * input is a JSON 400/413/415, never a 500), on the default MAX_BODY_BYTES.
 */
describe('websocket handshakes and bad input', () => {
  let stack: TestStack;
  let aliceKey: string;
  let alice: ReturnType<typeof apiClient>;
  let conversationId: string;
  let turnId: string;
  const clients: TestWsClient[] = [];

  beforeAll(async () => {
    stack = await startTestStack({ env: { ADMIN_TOKEN, WS_TICKET_TTL_SECONDS: '1', ALLOWED_ORIGINS: `${ALLOWED_ORIGIN}, https://other.example.test` } });
    aliceKey = (await stack.createUser('alice')).apiKey;
    alice = apiClient(stack.url, aliceKey);
    conversationId = (await alice.post('/v1/conversations', {})).body.id;
    turnId = (await alice.post(`/v1/conversations/${conversationId}/turns`, { content: 'hello [[scripted {"text": "hi"}]]' })).body.turnId;
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await stack.close();
  });

  const ticket = async (): Promise<string> => (await alice.post('/v1/ws-tickets')).body.ticket;
  const ticketKey = (value: string) => `${stack.config.REDIS_PREFIX}:ws-ticket:${value}`;
  const expectRefused = async (handshake: ReturnType<typeof rawHandshake>, status: number, code: string) => {
    const answer = await handshake;
    expect([answer.status, JSON.parse(answer.body).error.code]).toEqual([status, code]);
    expect(answer.headers['content-type']).toBe('application/json');
    expect(answer.headers.upgrade).toBeUndefined();
    answer.socket.destroy();
  };

  describe('credentials (case 21)', () => {
    it('refuses a missing, wrong or forged credential with 401 before the upgrade', async () => {
      await expectRefused(rawHandshake(stack.url), 401, 'unauthorized');
      await expectRefused(rawHandshake(stack.url, { headers: { authorization: 'Bearer sy_not-a-real-key-at-all' } }), 401, 'unauthorized');
      await expectRefused(rawHandshake(stack.url, { headers: { authorization: `Basic ${aliceKey}` } }), 401, 'unauthorized');
      // Well-formed but never issued, then malformed ones.
      const forged = `wst_${Buffer.alloc(24, 7).toString('base64url')}`;
      expect((await ticket()).length).toBe(forged.length);
      for (const bad of [forged, 'wst_short', `${forged}x`, encodeURIComponent(aliceKey)]) {
        await expectRefused(rawHandshake(stack.url, { path: `/v1/ws?ticket=${bad}` }), 401, 'unauthorized');
      }
      // The same answers through a client library, and a good key still gets in.
      await expect(TestWsClient.connect(stack.url, { ticket: forged })).rejects.toThrow('HTTP 401');
      const client = await TestWsClient.connect(stack.url, { apiKey: aliceKey });
      clients.push(client);
    });

    it('lets a ticket in once: a reused one is 401', async () => {
      const once = await ticket();
      const client = await TestWsClient.connect(stack.url, { ticket: once });
      clients.push(client);
      client.send({ type: 'subscribe', conversationId });
      expect(await client.waitFor((frame) => frame.type === 'subscribed')).toMatchObject({ conversationId });
      await expectRefused(rawHandshake(stack.url, { path: `/v1/ws?ticket=${once}` }), 401, 'unauthorized');
    });

    it('refuses an expired ticket with 401', async () => {
      const issued = await alice.post('/v1/ws-tickets');
      expect(issued.body.expiresInSeconds).toBe(1);
      const key = ticketKey(issued.body.ticket);
      const ttl = await stack.resources.redis.pttl(key);
      expect(ttl).toBeGreaterThan(0);
      expect(ttl).toBeLessThanOrEqual(1000);
      // Expiry emits nothing to wait for: poll Redis, bounded by twice the TTL.
      await poll('the ticket did not expire', async () => (await stack.resources.redis.exists(key)) === 0, 2000);
      await expectRefused(rawHandshake(stack.url, { path: `/v1/ws?ticket=${issued.body.ticket}` }), 401, 'unauthorized');
    });

    it('refuses a foreign Origin with 403 without spending the ticket, and lets a listed Origin in', async () => {
      const kept = await ticket();
      for (const origin of ['https://evil.example.test', 'null', `http://${new URL(stack.url).host}`, `${ALLOWED_ORIGIN}.evil.test`]) {
        await expectRefused(rawHandshake(stack.url, { path: `/v1/ws?ticket=${kept}`, headers: { origin } }), 403, 'forbidden');
        await expectRefused(rawHandshake(stack.url, { headers: { origin, authorization: `Bearer ${aliceKey}` } }), 403, 'forbidden');
      }
      expect(await stack.resources.redis.exists(ticketKey(kept))).toBe(1);
      const listed = await rawHandshake(stack.url, { path: `/v1/ws?ticket=${kept}`, headers: { origin: ALLOWED_ORIGIN } });
      expect(listed.status).toBe(101);
      listed.socket.destroy();
      const other = await rawHandshake(stack.url, { headers: { origin: 'https://other.example.test', authorization: `Bearer ${aliceKey}` } });
      expect(other.status).toBe(101);
      other.socket.destroy();
      // An allowed Origin does not excuse missing credentials.
      await expectRefused(rawHandshake(stack.url, { headers: { origin: ALLOWED_ORIGIN } }), 401, 'unauthorized');
    });
  });

  describe('bad input (case 25)', () => {
    const expectJsonError = (answer: { status: number; body: any; headers: Headers }, status: number, code: string) => {
      expect([answer.status, answer.body?.error?.code]).toEqual([status, code]);
      expect(answer.headers.get('content-type')).toMatch(/^application\/json/);
    };
    /** Every route that takes a body, from the app itself (a route added later is swept too), with what it accepts. */
    const writeRoutes = () => {
      const served = servedRoutes(stack.api.app);
      // An exclusion that names no route any more would hide nothing: the list is kept to what is served.
      expect(served.map(({ method, path }) => `${method} ${path}`)).toEqual(expect.arrayContaining(NOT_JSON_BODY_ROUTES));
      const routes = served.filter(({ method, path }) => !['get', 'head'].includes(method) && !NOT_JSON_BODY_ROUTES.includes(`${method} ${path}`));
      // Every kind is there: if one goes missing, the filter above has gone wrong.
      expect(routes.map(({ method, path }) => `${method} ${path}`)).toEqual(
        expect.arrayContaining([
          'post /v1/conversations',
          'post /api/chat',
          'post /v1/tools/{name}/invoke',
          'post /v1/session-tokens',
          'post /v1/turns/{id}/approvals',
          'post /v1/webhooks',
          'post /v1/admin/users',
          'put /v1/admin/users/{id}/tools',
          'post /openai/v1/responses',
          'post /openai/v1/batches',
        ]),
      );
      return routes.map(({ method, path }) => ({
        method: method.toUpperCase(),
        // The body is refused before the route reads its ids: any id does.
        path: path.replace(/\{(\w+)\}/g, (_, name: string) => (name === 'name' ? 'calculator' : `${name}_unknown`)),
        credential: path.startsWith('/v1/admin/') ? ADMIN_TOKEN : aliceKey,
        openAi: path.startsWith('/openai/v1/'),
        limitBytes: path === '/api/chat' ? stack.config.MAX_CHAT_BODY_BYTES : stack.config.MAX_BODY_BYTES,
      }));
    };
    type WriteRoute = ReturnType<typeof writeRoutes>[number];
    const send = (route: WriteRoute, body: string | Buffer | ReadableStream, headers: Record<string, string> = {}) =>
      fetch(`${stack.url}${route.path}`, {
        method: route.method,
        headers: { authorization: `Bearer ${route.credential}`, 'content-type': 'application/json', ...headers },
        body,
        ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
      } as RequestInit);
    /** The route's documented error shape (OpenAI's under /openai/v1), its status and code, and no stack trace. */
    const expectBodyRefused = async (route: WriteRoute, answer: Response, status: number, code: string) => {
      const text = await answer.text();
      const where = `${route.method} ${route.path}`;
      expect({ where, status: answer.status, type: answer.headers.get('content-type') }).toEqual({ where, status, type: expect.stringMatching(/^application\/json/) });
      const { error } = JSON.parse(text);
      if (route.openAi) expect({ where, error }).toEqual({ where, error: { message: expect.any(String), type: 'invalid_request_error', param: null, code } });
      else expect({ where, error }).toEqual({ where, error: { code, message: expect.any(String) } });
      expect(text).not.toMatch(/\bat \S+ \(|node_modules|\.[jt]s:\d/);
    };

    it('answers a body past its limit (2 MB, or more on /api/chat) with 413 on every write route, also chunked or compressed', async () => {
      expect(stack.config.MAX_BODY_BYTES).toBe(1024 * 1024);
      for (const route of writeRoutes()) {
        const big = JSON.stringify({ content: 'x'.repeat(Math.max(TWO_MB, route.limitBytes + 1024 * 1024)) });
        await expectBodyRefused(route, await send(route, big), 413, 'payload_too_large');
        // No Content-Length: the limit holds while the body streams in.
        await expectBodyRefused(route, await send(route, new Blob([big]).stream()), 413, 'payload_too_large');
        // A few KB on the wire, past the limit once inflated.
        await expectBodyRefused(route, await send(route, gzipSync(big), { 'content-encoding': 'gzip' }), 413, 'payload_too_large');
      }
    });

    it('answers malformed JSON with 400 and a body that is not JSON with 415 on every write route', async () => {
      for (const route of writeRoutes()) {
        await expectBodyRefused(route, await send(route, '{"content": "unfinished'), 400, 'invalid_json');
        await expectBodyRefused(route, await send(route, 'content=hi', { 'content-type': 'application/x-www-form-urlencoded' }), 415, 'unsupported_media_type');
        await expectBodyRefused(route, await send(route, '{"content": "hi"}', { 'content-type': 'text/plain' }), 415, 'unsupported_media_type');
      }
    });

    it('answers what the database could not store, or a body that does not decode, with a 4xx naming the problem', async () => {
      const turns = `/v1/conversations/${conversationId}/turns`;
      const cases: [string, string, unknown, Record<string, string>?][] = [
        ['POST', '/v1/conversations', { title: 'a\u0000b' }],
        ['POST', '/v1/conversations', { metadata: { ['key\u0000']: 1 } }],
        ['POST', '/v1/conversations', { metadata: { note: 'lone \ud800 surrogate' } }],
        ['POST', '/v1/conversations', `{"metadata": ${'{"a": '.repeat(50_000)}1${'}'.repeat(50_000)}}`],
        ['POST', turns, { content: 'hi', idempotencyKey: 'k\u0000' }],
        ['POST', turns, { content: [{ type: 'text', text: '\udc00' }] }],
        ['POST', `/v1/turns/${turnId}/tool-results`, { toolCallId: 'call_0', result: { text: '\u0000' } }],
        ['GET', '/v1/conversations?externalId=%00', undefined],
      ];
      for (const [method, path, body] of cases) {
        const answer = await alice.request(method, path, body);
        expectJsonError(answer, 400, 'invalid_request');
        expect(answer.body.error.details).toEqual([expect.objectContaining({ field: expect.any(String), message: expect.any(String) })]);
      }
      expect((await alice.request('POST', '/v1/conversations', { title: 'a\u0000b' })).body.error.details[0].field).toBe('title');

      // A body that claims a compression it does not have, and a charset nobody decodes.
      for (const encoding of ['gzip', 'br', 'deflate']) {
        expectJsonError(await alice.request('POST', turns, '{"content": "hi"}', { 'content-encoding': encoding }), 400, 'invalid_request');
      }
      expectJsonError(await alice.request('POST', turns, '{"content": "hi"}', { 'content-encoding': 'snappy' }), 415, 'unsupported_media_type');
      expectJsonError(await alice.request('POST', turns, '{"content": "hi"}', { 'content-type': 'application/json; charset=klingon' }), 415, 'unsupported_media_type');
      // Ids that this API never hands out are simply not found, whatever they contain.
      expectJsonError(await alice.get('/v1/conversations/%E0%A4%A'), 400, 'invalid_request');
      for (const id of ['%00', 'x'.repeat(5000), 'conv_%F0%9F%92%A9', "conv_'%3B"]) {
        expectJsonError(await alice.get(`/v1/conversations/${id}`), 404, 'not_found');
        expectJsonError(await alice.get(`/v1/turns/${id}`), 404, 'not_found');
      }
      // None of it hurt: the API still works, and never answered a 500.
      expect((await alice.post('/v1/conversations', { title: 'fine' })).status).toBe(201);
      const metrics = await (await fetch(`${stack.url}/metrics`)).text();
      expect(metrics).not.toMatch(/switchyard_http_requests_total\{[^}]*status="5\d\d"/);
    });

    // PostgreSQL refuses a NUL: the model's text reaches clients and the database with U+FFFD.
    it("stores a NUL in the model's text instead of failing the step over and over", async () => {
      const client = await TestWsClient.connect(stack.url, { apiKey: aliceKey });
      clients.push(client);
      const conversation = (await alice.post('/v1/conversations', {})).body.id as string;
      client.send({ type: 'subscribe', conversationId: conversation });
      await client.waitFor((frame) => frame.type === 'subscribed');
      // The scenario's JSON escape becomes a real NUL in the model's stream.
      const posted = await alice.post(`/v1/conversations/${conversation}/turns`, { content: '[[scripted {"text": "a\\u0000b"}]]' });
      const turn = posted.body.turnId as string;
      const outcome = await client.waitFor(
        ({ type, event }) =>
          type === 'event' && event.turnId === turn && (['turn-finish', 'turn-error'].includes(event.type) || (event.type === 'turn-start' && event.attempt > 1)),
      );
      await alice.post(`/v1/turns/${turn}/cancel`);
      expect(outcome.event).toMatchObject({ type: 'turn-finish' });
      const streamed = client
        .events()
        .filter((event) => event.turnId === turn && event.type === 'text-delta')
        .map((event) => event.delta)
        .join('');
      const stored = (await alice.get(`/v1/conversations/${conversation}`)).body.messages.at(-1).content;
      expect(streamed).toBe('a\uFFFDb');
      expect(stored).toBe(streamed);
    });

    it('closes a 2 MB websocket frame with 1009, answers an unstorable frame with bad_frame, and keeps serving', async () => {
      const client = await TestWsClient.connect(stack.url, { apiKey: aliceKey });
      clients.push(client);
      client.send({ type: 'tool-result', turnId, toolCallId: 'call_0', result: 'nul \u0000 inside' });
      expect(await client.waitFor((frame) => frame.type === 'error')).toMatchObject({ code: 'bad_frame', message: expect.stringContaining('result') });
      client.send({ type: 'ping' });
      await client.waitFor((frame) => frame.type === 'pong');

      // The peer may still be writing when the server closes: its write error is expected.
      client.socket.on('error', () => undefined);
      client.send({ type: 'subscribe', conversationId: 'x'.repeat(TWO_MB) });
      expect((await client.whenClosed()).code).toBe(1009);
      const next = await TestWsClient.connect(stack.url, { apiKey: aliceKey });
      clients.push(next);
      next.send({ type: 'subscribe', conversationId });
      expect(await next.waitFor((frame) => frame.type === 'subscribed')).toMatchObject({ conversationId });
    });
  });
});

/** docs/RELIABILITY.md case 20 at the handshake: a websocket is paid for like a request, and held within a cap per key. */
describe('websocket handshakes within the per-user rate and the per-key connection cap', () => {
  const refusal = async (handshake: ReturnType<typeof rawHandshake>) => {
    const answer = await handshake;
    answer.socket.destroy();
    return {
      status: answer.status,
      upgrade: answer.headers.upgrade,
      retryAfter: Number(answer.headers['retry-after']),
      error: answer.status === 101 ? undefined : JSON.parse(answer.body).error,
    };
  };
  const bearer = (apiKey: string) => ({ headers: { authorization: `Bearer ${apiKey}` } });

  describe('RATE_LIMIT_PER_MINUTE', () => {
    const PER_MINUTE = 5;
    let stack: TestStack;
    const clients: TestWsClient[] = [];

    beforeAll(async () => {
      stack = await startTestStack({ env: { RATE_LIMIT_PER_MINUTE: String(PER_MINUTE) } });
    });
    afterAll(async () => {
      for (const client of clients) client.close();
      await stack.close();
    });

    it('counts a handshake as a request of its user: past the rate it is answered 429 before the upgrade, as HTTP is', async () => {
      const user = await stack.createUser('handshaker');
      const api = apiClient(stack.url, user.apiKey);
      // Two requests and two handshakes of the user's five a minute (a ticket is one request too).
      expect((await api.get('/v1/conversations')).status).toBe(200);
      const { ticket } = (await api.post('/v1/ws-tickets')).body;
      clients.push(await TestWsClient.connect(stack.url, { apiKey: user.apiKey }), await TestWsClient.connect(stack.url, { ticket }));
      expect((await api.get('/v1/conversations')).status).toBe(200);

      const refused = await refusal(rawHandshake(stack.url, bearer(user.apiKey)));
      expect(refused).toEqual({ status: 429, upgrade: undefined, retryAfter: expect.any(Number), error: { code: 'rate_limited', message: 'too many requests; slow down' } });
      expect(refused.retryAfter).toBeGreaterThan(0);
      expect(refused.retryAfter).toBeLessThanOrEqual(60);
      // The same count as HTTP's: the next request is over it too.
      expect((await api.get('/v1/conversations')).status).toBe(429);
      // Another user has a count of their own.
      const other = await stack.createUser('neighbour');
      expect((await refusal(rawHandshake(stack.url, bearer(other.apiKey)))).status).toBe(101);
    });
  });

  describe("a handshake refused for its key's open websockets", () => {
    const CAP = 2;
    const PER_MINUTE = 10;
    let stack: TestStack;
    const clients: TestWsClient[] = [];

    beforeAll(async () => {
      stack = await startTestStack({ env: { WS_MAX_CONNECTIONS_PER_KEY: String(CAP), RATE_LIMIT_PER_MINUTE: String(PER_MINUTE) } });
    });
    afterAll(async () => {
      for (const client of clients) client.close();
      await stack.close();
    });

    it("does not count against the user's request rate: clients retrying past the cap leave the user's HTTP requests their rate", async () => {
      const user = await stack.createUser('many-devices');
      const api = apiClient(stack.url, user.apiKey);
      for (let i = 0; i < CAP; i++) clients.push(await TestWsClient.connect(stack.url, { apiKey: user.apiKey }));
      // Devices refused for the cap trying again, more times than the user's whole rate.
      for (let i = 0; i < PER_MINUTE + 5; i++) {
        expect(await refusal(rawHandshake(stack.url, bearer(user.apiKey)))).toEqual({
          status: 429,
          upgrade: undefined,
          retryAfter: expect.any(Number),
          error: { code: 'rate_limited', message: expect.stringContaining('open websockets for this API key') },
        });
      }
      expect((await api.get('/v1/conversations')).status).toBe(200);
    });
  });

  describe('WS_MAX_CONNECTIONS_PER_KEY', () => {
    const CAP = 3;
    let stack: TestStack;
    const clients: TestWsClient[] = [];

    beforeAll(async () => {
      stack = await startTestStack({ env: { WS_MAX_CONNECTIONS_PER_KEY: String(CAP) } });
    });
    afterAll(async () => {
      for (const client of clients) client.close();
      await stack.close();
    });

    const openWebsockets = async () => {
      const page = await (await fetch(`${stack.url}/metrics`)).text();
      return Number(/^switchyard_websocket_clients (\d+)$/m.exec(page)?.[1]);
    };

    it('refuses a key one websocket past the cap with 429 before the upgrade, tickets included; another key and a closed socket make room', async () => {
      expect(stack.config.WS_MAX_CONNECTIONS_PER_KEY).toBe(CAP);
      const user = await stack.createUser('many-tabs');
      const api = apiClient(stack.url, user.apiKey);
      const ticket = async () => (await api.post('/v1/ws-tickets')).body.ticket as string;
      for (let i = 0; i < CAP - 1; i++) clients.push(await TestWsClient.connect(stack.url, { apiKey: user.apiKey }));
      clients.push(await TestWsClient.connect(stack.url, { ticket: await ticket() }));

      const expectedRefusal = {
        status: 429,
        upgrade: undefined,
        retryAfter: expect.any(Number),
        error: { code: 'rate_limited', message: expect.stringContaining('open websockets for this API key') },
      };
      expect(await refusal(rawHandshake(stack.url, bearer(user.apiKey)))).toEqual(expectedRefusal);
      expect(await refusal(rawHandshake(stack.url, { path: `/v1/ws?ticket=${await ticket()}` }))).toEqual(expectedRefusal);
      // A session token's websocket counts against the key it was minted with.
      const token = (await api.post('/v1/session-tokens', {})).body.token as string;
      expect(await refusal(rawHandshake(stack.url, bearer(token)))).toEqual(expectedRefusal);

      // Counted per key: the same user's other key has places of its own.
      const otherKey = await stack.resources.users.createApiKey(user.id);
      const byOtherKey = await TestWsClient.connect(stack.url, { apiKey: otherKey.apiKey });
      clients.push(byOtherKey);
      expect(await openWebsockets()).toBe(CAP + 1);

      // A closed websocket gives its place back (once the gateway saw it go), and only one.
      const closing = clients[0]!;
      closing.close();
      await closing.whenClosed();
      // The close happens in the gateway after the client saw it: wait for its count to drop.
      await poll('the gateway kept the closed websocket', async () => (await openWebsockets()) === CAP, 5000);
      clients.push(await TestWsClient.connect(stack.url, { apiKey: user.apiKey }));
      expect(await refusal(rawHandshake(stack.url, bearer(user.apiKey)))).toEqual(expectedRefusal);
    });
  });
});
