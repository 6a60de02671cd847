import { sessionTokenMayUse } from '../../src/api/session-scope';
import { apiClient } from '../support/http';
import { rawHandshake } from '../support/raw-websocket';
import { spawnService, type ServiceProcess } from '../support/processes';
import { startTestStack, type TestStack } from '../support/stack';
import { scripted } from '../support/tool-turns';
import { TestWsClient } from '../support/ws-client';

const APP = 'http://app.example';
const ELSEWHERE = 'http://elsewhere.example';

type Route = { method: 'GET' | 'POST'; path: string; body?: unknown; withKey?: true };

/** CORS on every route a session token may use: preflights without credentials, then the token. */
describe('CORS for a browser app on another origin', () => {
  let stack: TestStack;
  let apiKey: string;
  let token: string;
  let routes: Route[];

  beforeAll(async () => {
    stack = await startTestStack({ env: { ALLOWED_ORIGINS: APP } });
    ({ apiKey } = await stack.createUser('cross-origin'));
    token = (await apiClient(stack.url, apiKey).post('/v1/session-tokens', {})).body.token;
    const session = apiClient(stack.url, token);
    const chatId = `chat-${Date.now()}`;
    const chatted = await fetch(`${stack.url}/api/chat`, chatRequest(chatId, 'first', token));
    await chatted.text();
    const conversation = (await session.get(`/v1/conversations?externalId=${chatId}`)).body.data[0];
    const [message] = (await session.get(`/api/chat/${chatId}/messages`)).body.filter((each: any) => each.role === 'assistant');
    const approval = await callAwaitingApproval(stack.url, apiKey);
    routes = [
      { method: 'GET', path: '/v1/conversations' },
      { method: 'POST', path: '/v1/conversations', body: { title: 'made by a page' } },
      { method: 'POST', path: `/v1/conversations/${conversation.id}/turns`, body: { content: scripted({ text: 'ok' }), onBusy: 'enqueue' } },
      { method: 'GET', path: `/v1/conversations/${conversation.id}` },
      { method: 'GET', path: `/v1/turns/${message.id}` },
      { method: 'GET', path: `/v1/turns/${message.id}/events` },
      { method: 'POST', path: `/v1/turns/${message.id}/cancel` },
      { method: 'POST', path: '/v1/ws-tickets' },
      { method: 'POST', path: '/api/chat', body: chatBody(chatId, 'second') },
      { method: 'GET', path: `/api/chat/${chatId}/stream` },
      { method: 'GET', path: `/api/chat/${chatId}/messages` },
      { method: 'GET', path: '/v1/approvals' },
      // The same decision again answers the stored one (200), so the refused origin's call below may repeat it.
      { method: 'POST', path: `/v1/turns/${approval.turnId}/approvals`, body: { toolCallId: approval.toolCallId, approved: false } },
      // A page that exchanges a key a person pastes for a token, as the playground does.
      { method: 'POST', path: '/v1/session-tokens', body: {}, withKey: true },
    ];
  });
  afterAll(() => stack.close());

  const preflight = (origin: string, method: string, path: string, base = stack.url) =>
    fetch(`${base}${path}`, { method: 'OPTIONS', headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization,content-type' } });
  const call = (origin: string, route: Route) =>
    fetch(`${stack.url}${route.path}`, {
      method: route.method,
      headers: { origin, authorization: `Bearer ${route.withKey ? apiKey : token}`, ...(route.body ? { 'content-type': 'application/json' } : {}) },
      ...(route.body ? { body: JSON.stringify(route.body) } : {}),
    });

  it('answers preflights of every route a session token may use for an allowed origin, then serves the token from it', async () => {
    for (const route of routes) {
      expect([route.method, route.path, route.withKey ?? sessionTokenMayUse(route.method, route.path)]).toEqual([route.method, route.path, true]);
      const allowed = await preflight(APP, route.method, route.path);
      expect([route.path, allowed.status, allowed.headers.get('access-control-allow-origin')]).toEqual([route.path, 204, APP]);
      expect(allowed.headers.get('access-control-allow-headers')).toContain('authorization');
      expect(allowed.headers.get('access-control-allow-methods')).toContain(route.method);

      const real = await call(APP, route);
      await real.text();
      expect([route.path, real.status < 300, real.headers.get('access-control-allow-origin')]).toEqual([route.path, true, APP]);
    }
    // The chat stream's header is readable by the page.
    const chat = await call(
      APP,
      routes.find((route) => route.path === '/api/chat')!,
    );
    await chat.text();
    expect(chat.headers.get('access-control-expose-headers')).toContain('x-vercel-ai-ui-message-stream');
  });

  it('refuses an origin not in ALLOWED_ORIGINS: a 403 preflight naming the setting, and no CORS headers on a real request', async () => {
    for (const route of routes) {
      const refused = await preflight(ELSEWHERE, route.method, route.path);
      expect([route.path, refused.status, refused.headers.get('access-control-allow-origin')]).toEqual([route.path, 403, null]);
      const { error } = await errorOf(refused);
      expect(error).toMatchObject({ code: 'forbidden', details: { origin: ELSEWHERE, setting: 'ALLOWED_ORIGINS' } });
      expect(error.message).toContain(`ALLOWED_ORIGINS (${APP}) does not include it`);

      const real = await call(ELSEWHERE, route);
      await real.text();
      expect([route.path, real.headers.get('access-control-allow-origin')]).toEqual([route.path, null]);
    }
  });

  it('answers CORS on the routes that need the API key too, so that a page reads their 403 (never an opaque "Failed to fetch")', async () => {
    const needKey: Route[] = [
      { method: 'GET', path: '/v1/tools' },
      { method: 'GET', path: '/v1/batches' },
      { method: 'POST', path: '/v1/session-tokens', body: {} },
      { method: 'POST', path: '/v1/webhooks', body: { url: 'https://example.com/hook', events: ['*'] } },
    ];
    for (const route of needKey) {
      expect(sessionTokenMayUse(route.method, route.path)).toBe(false);
      const allowed = await preflight(APP, route.method, route.path);
      expect([route.path, allowed.status, allowed.headers.get('access-control-allow-origin')]).toEqual([route.path, 204, APP]);
      const refused = await call(APP, route);
      expect([route.path, refused.status, refused.headers.get('access-control-allow-origin')]).toEqual([route.path, 403, APP]);
      const { error } = await errorOf(refused);
      expect([route.path, error.code, error.message]).toEqual([route.path, 'forbidden', expect.stringContaining('this route needs the API key')]);
    }
    // Methods besides GET and POST are allowed to be asked for: DELETE answers the same readable 403.
    const deletion = await preflight(APP, 'DELETE', '/v1/conversations/c');
    expect([deletion.status, deletion.headers.get('access-control-allow-methods')]).toEqual([204, expect.stringContaining('DELETE')]);
    // An expired or wrong token's 401 is as readable.
    const wrong = await fetch(`${stack.url}/v1/conversations`, { headers: { origin: APP, authorization: 'Bearer sst_wrong' } });
    expect([wrong.status, wrong.headers.get('access-control-allow-origin'), (await errorOf(wrong)).error.code]).toEqual([401, APP, 'unauthorized']);
  });

  describe('without ALLOWED_ORIGINS', () => {
    let api: ServiceProcess;

    beforeAll(async () => {
      api = await spawnService('api', stack.childEnv({ ALLOWED_ORIGINS: '' }));
    }, 60_000);
    afterAll(() => api?.kill());

    it("lets only the API's own origin in, and tells a developer on another what to set: in the answer, and in one log line per origin", async () => {
      const own = await preflight(api.url, 'POST', '/api/chat', api.url);
      expect([own.status, own.headers.get('access-control-allow-origin')]).toEqual([204, api.url]);

      const dev = 'http://localhost:5173';
      for (let i = 0; i < 3; i++) {
        const refused = await preflight(dev, 'GET', '/v1/conversations', api.url);
        expect(refused.status).toBe(403);
        expect((await errorOf(refused)).error.message).toBe(
          `a browser app at ${dev} may not call this API: ALLOWED_ORIGINS is not set, so only pages this API serves (127.0.0.1:${api.port}) may; ` +
            `set ALLOWED_ORIGINS to a comma-separated list of origins that includes ${dev} (or * for any)`,
        );
      }
      expect((await preflight(ELSEWHERE, 'POST', '/api/chat', api.url)).status).toBe(403);
      // Lines are written in order: once the second origin's is read, so are all of the first's.
      const second = await api.waitForLog((entry) => entry.origin === ELSEWHERE);
      expect(second).toMatchObject({ level: 40, setting: 'ALLOWED_ORIGINS' });
      const warnings = api
        .stdout()
        .split('\n')
        .filter((line) => line.includes('"setting":"ALLOWED_ORIGINS"'))
        .map((line) => JSON.parse(line));
      expect(warnings.map((entry) => entry.origin)).toEqual([dev, ELSEWHERE]);
      expect(warnings[0].msg).toContain(`set ALLOWED_ORIGINS to a comma-separated list of origins that includes ${dev}`);
    });

    it('logs a websocket refused for its Origin the same way, once per origin', async () => {
      const origin = 'http://ws-app.example';
      for (let i = 0; i < 2; i++) {
        const refused = await rawHandshake(api.url, { headers: { origin } });
        refused.socket.destroy();
        expect([refused.status, JSON.parse(refused.body).error.code]).toEqual([403, 'forbidden']);
      }
      const other = 'http://ws-other.example';
      (await rawHandshake(api.url, { headers: { origin: other } })).socket.destroy();
      await api.waitForLog((entry) => entry.origin === other);
      const warnings = api
        .stdout()
        .split('\n')
        .filter((line) => line.includes('"setting":"ALLOWED_ORIGINS"') && line.includes('ws-'))
        .map((line) => JSON.parse(line));
      expect(warnings.map((entry) => [entry.level, entry.origin])).toEqual([
        [40, origin],
        [40, other],
      ]);
      expect(warnings[0].msg).toContain(`set ALLOWED_ORIGINS to a comma-separated list of origins that includes ${origin}`);
    });
  });
});

/** A turn (made with the API key) whose calculator call waits for a person's decision. */
async function callAwaitingApproval(url: string, apiKey: string): Promise<{ turnId: string; toolCallId: string }> {
  const api = apiClient(url, apiKey);
  const conversationId = (await api.post('/v1/conversations', { requireApproval: ['calculator'] })).body.id as string;
  const watcher = await TestWsClient.subscribed(url, { apiKey }, conversationId);
  try {
    const content = scripted({ steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] }, { text: 'two' }] });
    const turnId = (await api.post(`/v1/conversations/${conversationId}/turns`, { content })).body.turnId as string;
    const request = await watcher.waitFor((frame) => frame.type === 'event' && frame.event.turnId === turnId && frame.event.type === 'tool-approval-request');
    return { turnId, toolCallId: request.event.toolCallId };
  } finally {
    watcher.close();
  }
}

function chatBody(chatId: string, marker: string) {
  return { id: chatId, messages: [{ id: `m-${marker}`, role: 'user', parts: [{ type: 'text', text: `${marker} ${scripted({ text: 'ok' })}` }] }], trigger: 'submit-message' };
}

function chatRequest(chatId: string, marker: string, token: string): RequestInit {
  return { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(chatBody(chatId, marker)) };
}

function errorOf(response: Response): Promise<{ error: { code: string; message: string; details?: unknown } }> {
  return response.json() as Promise<{ error: { code: string; message: string; details?: unknown } }>;
}
