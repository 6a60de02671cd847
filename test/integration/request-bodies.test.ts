import { randomBytes } from 'node:crypto';
import type { UIMessage } from 'ai';
import { NodeChat, textOf } from '../support/ai-sdk-chat';
import { apiClient } from '../support/http';
import { rawRequest } from '../support/raw-http';
import { startTestStack, type TestStack } from '../support/stack';
import { scripted } from '../support/tool-turns';

const ADMIN_TOKEN = 'admin-token-for-tests-0123';
const FAILURES_PER_MINUTE = 5;
const CHAT_BODY_BYTES = 2 * 1024 * 1024;

/**
 * Request bodies are read only for those who may send them: credentials and rate limits first
 * (a refused request's body is never waited for), each route's own size limit, and text that
 * is UTF-8.
 */
describe('request bodies', () => {
  let stack: TestStack;
  let apiKey: string;
  // Each test is its own client address (TRUST_PROXY), so that their failed credentials do not add up.
  let addresses = 0;
  const nextAddress = () => `203.0.113.${++addresses}`;

  beforeAll(async () => {
    stack = await startTestStack({
      env: {
        TRUST_PROXY: 'loopback',
        AUTH_FAILURES_PER_MINUTE: String(FAILURES_PER_MINUTE),
        ADMIN_TOKEN,
        MAX_CHAT_BODY_BYTES: String(CHAT_BODY_BYTES),
        REQUEST_TIMEOUT_MS: '5000',
        KEEP_ALIVE_TIMEOUT_MS: '2500',
      },
    });
    apiKey = (await stack.createUser('alice')).apiKey;
  });
  afterAll(() => stack.close());

  const post = (path: string, body: string | Buffer, headers: Record<string, string>) =>
    fetch(`${stack.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const errorOf = async (response: Response) => [response.status, ((await response.json()) as any).error.code];
  const failAuthentication = async (address: string, times: number) => {
    for (let i = 0; i < times; i++) expect((await post('/v1/conversations', '{}', { authorization: 'Bearer sy_wrong', 'x-forwarded-for': address })).status).toBe(401);
  };

  describe('credentials before bodies', () => {
    // 900 KB, under MAX_BODY_BYTES, and not JSON: read first, it would be a 400.
    const junk = `{"title": ${'x'.repeat(900 * 1024)}`;

    it('answers an unauthenticated 900 KB body with 401, and with 429 from an address over AUTH_FAILURES_PER_MINUTE', async () => {
      const address = nextAddress();
      for (const path of ['/v1/conversations', '/api/chat', '/v1/session-tokens']) {
        expect(await errorOf(await post(path, junk, { 'x-forwarded-for': address }))).toEqual([401, 'unauthorized']);
      }
      expect(await errorOf(await post('/v1/conversations', junk, { authorization: 'Bearer sy_wrong', 'x-forwarded-for': address }))).toEqual([401, 'unauthorized']);
      expect(await errorOf(await post('/v1/admin/users', junk, { authorization: 'Bearer wrong-admin-token', 'x-forwarded-for': address }))).toEqual([401, 'unauthorized']);

      const flooding = nextAddress();
      await failAuthentication(flooding, FAILURES_PER_MINUTE);
      for (const path of ['/v1/conversations', '/api/chat', '/v1/admin/users']) {
        const blocked = await post(path, junk, { authorization: `Bearer ${apiKey}`, 'x-forwarded-for': flooding });
        expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(await errorOf(blocked)).toEqual([429, 'rate_limited']);
      }
      // With a good key from elsewhere, the same body is read, and refused for what it is.
      expect(await errorOf(await post('/v1/conversations', junk, { authorization: `Bearer ${apiKey}`, 'x-forwarded-for': nextAddress() }))).toEqual([400, 'invalid_json']);
    });

    it('answers a request that declares a body it does not send at once, and closes the connection instead of waiting for the body', async () => {
      const stalled = (path: string, headers: Record<string, string> = {}) =>
        rawRequest(stack.url, {
          method: 'POST',
          path,
          headers: { 'content-type': 'application/json', 'content-length': '1000000', 'x-forwarded-for': nextAddress(), ...headers },
          body: '{"title": ',
        });
      for (const [path, headers, status] of [
        ['/v1/conversations', {}, 401],
        ['/api/chat', { authorization: 'Bearer sy_wrong' }, 401],
        ['/v1/admin/users', { authorization: 'Bearer wrong-admin-token' }, 401],
        ['/nowhere', {}, 404],
      ] as const) {
        const answer = await stalled(path, headers);
        expect([answer.status, JSON.parse(answer.body).error.code, answer.headers.connection]).toEqual([status, status === 401 ? 'unauthorized' : 'not_found', 'close']);
        await answer.closed;
      }
    });

    it('answers 408 and closes the connection when an authenticated body does not arrive within REQUEST_TIMEOUT_MS', async () => {
      const answer = await rawRequest(stack.url, {
        method: 'POST',
        path: '/v1/conversations',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', 'content-length': '1000000' },
        body: '{"title": ',
      });
      expect(answer.status).toBe(408);
      await answer.closed;
    });

    it('keeps an idle connection open for KEEP_ALIVE_TIMEOUT_MS, says so in Keep-Alive, then closes it', async () => {
      const answer = await rawRequest(stack.url, { method: 'GET', path: '/healthz' });
      expect(answer.status).toBe(200);
      // Node's own default would say timeout=5: the setting reached the server.
      expect(answer.headers['keep-alive']).toBe('timeout=2');
      let open = true;
      void answer.closed.then(() => (open = false));
      // Still open for a second request on the same connection.
      answer.socket.write(`GET /healthz HTTP/1.1\r\nHost: ${new URL(stack.url).host}\r\n\r\n`);
      await new Promise((resolve) => answer.socket.once('data', resolve));
      expect(open).toBe(true);
      await answer.closed;
    });
  });

  describe('the admin token', () => {
    it('counts wrong admin tokens per address and answers 429 past AUTH_FAILURES_PER_MINUTE, even to the right token', async () => {
      const address = nextAddress();
      const admin = (token: string, from: string) => post('/v1/admin/users', JSON.stringify({ name: 'carol' }), { authorization: `Bearer ${token}`, 'x-forwarded-for': from });
      for (let i = 0; i < FAILURES_PER_MINUTE; i++) expect(await errorOf(await admin(`wrong-admin-token-${i}`, address))).toEqual([401, 'unauthorized']);
      const blocked = await admin('wrong-admin-token', address);
      expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(await errorOf(blocked)).toEqual([429, 'rate_limited']);
      expect(await errorOf(await admin(ADMIN_TOKEN, address))).toEqual([429, 'rate_limited']);
      // Another address is not blocked by this one's failures.
      expect((await admin(ADMIN_TOKEN, nextAddress())).status).toBe(201);
    });
  });

  describe('text', () => {
    it('refuses a JSON body that is not valid UTF-8 with 400 and stores nothing of it', async () => {
      const headers = { authorization: `Bearer ${apiKey}` };
      const title = `latin-1 ${randomBytes(4).toString('hex')}`;
      const invalid = Buffer.concat([Buffer.from(`{"title": "${title} `), Buffer.from([0xe9, 0xff, 0xfe, 0x28]), Buffer.from('"}')]);
      const refused = await post('/v1/conversations', invalid, headers);
      const { error } = (await refused.json()) as any;
      expect([refused.status, error.code, error.message]).toEqual([400, 'invalid_request', expect.stringContaining('UTF-8')]);
      const chat = Buffer.concat([
        Buffer.from(`{"id": "chat-${title}", "messages": [{"id": "u1", "role": "user", "parts": [{"type": "text", "text": "`),
        Buffer.from([0xc3, 0x28]),
        Buffer.from('"}]}]}'),
      ]);
      expect(await errorOf(await post('/api/chat', chat, headers))).toEqual([400, 'invalid_request']);
      const listed = await apiClient(stack.url, apiKey).get('/v1/conversations');
      expect(JSON.stringify(listed.body)).not.toContain(title);
      // The same text in UTF-8 is fine.
      expect((await post('/v1/conversations', Buffer.from(`{"title": "${title} é\uFFFD("}`), headers)).status).toBe(201);
    });
  });

  describe('/api/chat', () => {
    const history = (bytes: number): UIMessage[] =>
      Array.from({ length: Math.ceil(bytes / 100_000) }, (_, i) => ({
        id: `old-${i}`,
        role: i % 2 === 0 ? 'user' : 'assistant',
        parts: [{ type: 'text', text: 'h'.repeat(100_000) }],
      }));
    const chatWith = (messages: UIMessage[], options: Partial<ConstructorParameters<typeof NodeChat>[0]> = {}) =>
      new NodeChat({ url: stack.url, token: apiKey, id: `chat-${randomBytes(6).toString('hex')}`, messages, ...options });

    it('takes a useChat history larger than MAX_BODY_BYTES, up to MAX_CHAT_BODY_BYTES', async () => {
      const chat = chatWith(history(stack.config.MAX_BODY_BYTES + 300_000));
      await chat.sendMessage({ text: `still here ${scripted({ text: 'answered' })}` });
      expect([chat.status, chat.error?.message]).toEqual(['ready', undefined]);
      expect(textOf(chat.lastMessage)).toBe('answered');
    });

    it('refuses a history past MAX_CHAT_BODY_BYTES with 413, and serves it when the transport sends only the last message', async () => {
      const messages = history(CHAT_BODY_BYTES + 100_000);
      const whole = chatWith(messages);
      await whole.sendMessage({ text: `too much ${scripted({ text: 'never' })}` });
      expect(whole.status).toBe('error');
      expect(whole.error?.message).toContain('payload_too_large');

      // docs/API.md: Switchyard reads only the last message, so a transport may send only that.
      const lastOnly = chatWith(messages, {
        prepareSendMessagesRequest: ({ id, messages: all, trigger, messageId }) => ({ body: { id, messages: all.slice(-1), trigger, messageId } }),
      });
      await lastOnly.sendMessage({ text: `just the last ${scripted({ text: 'answered' })}` });
      expect([lastOnly.status, lastOnly.error?.message]).toEqual(['ready', undefined]);
      expect(textOf(lastOnly.lastMessage)).toBe('answered');
    });
  });
});
