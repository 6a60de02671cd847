import { announceRevocation } from '../../src/auth/revocation-watch';
import { apiClient } from '../support/http';
import { runToExit, spawnService, type ServiceProcess } from '../support/processes';
import { startTestStack, type TestStack } from '../support/stack';
import { scripted } from '../support/tool-turns';
import { TestWsClient } from '../support/ws-client';

/**
 * Revoking a key closes what it opened, on every API process: its websockets (1008) and its
 * SSE streams (an `error` event `unauthorized`, then the end), at once when the revocation is
 * announced, and within KEY_REVOCATION_CHECK_MS when the announcement was missed. A key an API
 * process verified and keeps in its cache is refused there by the next request after the
 * announcement.
 */
describe('a revoked key', () => {
  let stack: TestStack;
  let quiet: ServiceProcess;
  let sweeping: ServiceProcess;

  beforeAll(async () => {
    // The in-process API and `quiet` never sweep within the test: only the announcement can close
    // theirs; and `quiet` keeps the keys it verified for the whole test unless told of a revocation.
    stack = await startTestStack({ env: { KEY_REVOCATION_CHECK_MS: '600000' } });
    [quiet, sweeping] = await Promise.all([
      spawnService('api', stack.childEnv({ KEY_REVOCATION_CHECK_MS: '600000', API_KEY_CACHE_TTL_MS: '600000' })),
      spawnService('api', stack.childEnv({ KEY_REVOCATION_CHECK_MS: '300' })),
    ]);
  }, 30_000);
  afterAll(async () => {
    await Promise.all([quiet.kill('SIGTERM'), sweeping.kill('SIGTERM')]);
    await stack.close();
  });

  /** An SSE reader of a long turn: resolves with all it read once the server ends the stream. */
  function readEvents(url: string, apiKey: string, turnId: string): Promise<string> {
    return fetch(`${url}/v1/turns/${turnId}/events`, { headers: { authorization: `Bearer ${apiKey}` } }).then((response) => response.text());
  }

  async function longTurn(apiKey: string): Promise<{ conversationId: string; turnId: string }> {
    const api = apiClient(stack.url, apiKey);
    const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
    const turnId = (await api.post(`/v1/conversations/${conversationId}/turns`, { content: scripted({ tokens: 300, tokenDelayMs: 20 }) })).body.turnId as string;
    return { conversationId, turnId };
  }

  it('closes its websockets and SSE streams on every API process when the CLI revokes it', async () => {
    const user = await stack.resources.users.createUserWithKey('revoked-by-cli');
    const other = await stack.resources.users.createUserWithKey('bystander');
    const { conversationId, turnId } = await longTurn(user.apiKey);
    // One of them opened with a session token minted from the key: it goes with the key.
    const { token } = (await apiClient(stack.url, user.apiKey).post('/v1/session-tokens', {})).body;
    const sockets = await Promise.all([
      ...[stack.url, quiet.url].map((url) => TestWsClient.connect(url, { apiKey: user.apiKey })),
      TestWsClient.connect(quiet.url, { apiKey: token as string }),
    ]);
    for (const socket of sockets) {
      socket.send({ type: 'subscribe', conversationId });
      await socket.waitFor((frame) => frame.type === 'event' && frame.event.type === 'text-delta');
    }
    const bystander = await TestWsClient.connect(quiet.url, { apiKey: other.apiKey });
    const sse = readEvents(quiet.url, user.apiKey, turnId);

    const revoked = await runToExit('workers/cli.ts', stack.childEnv({ LOG_LEVEL: 'silent' }), ['keys', 'revoke', user.keyId]);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toEqual({ revoked: user.keyId, announced: true });

    for (const socket of sockets) expect(await socket.whenClosed()).toEqual({ code: 1008, reason: 'the API key was revoked' });
    const text = await sse;
    expect(text).toContain('event: text-delta');
    expect(text.trimEnd().split('\n\n').at(-1)).toBe(`event: error\ndata: ${JSON.stringify({ code: 'unauthorized', message: 'the API key was revoked' })}`);
    expect(bystander.closed).toBeUndefined();
    expect((await apiClient(quiet.url, user.apiKey).get('/v1/conversations')).status).toBe(401);
    await expect(TestWsClient.connect(stack.url, { apiKey: user.apiKey })).rejects.toThrow('HTTP 401');
    bystander.close();
  }, 30_000);

  it('is refused by the next request on an API process that had it cached, and so are its session tokens', async () => {
    const user = await stack.resources.users.createUserWithKey('cached-elsewhere');
    const { token } = (await apiClient(stack.url, user.apiKey).post('/v1/session-tokens', {})).body;
    const keyed = apiClient(quiet.url, user.apiKey);
    const session = apiClient(quiet.url, token as string);
    expect((await keyed.get('/v1/conversations')).status).toBe(200);
    expect((await session.get('/v1/conversations')).status).toBe(200);
    // Its close shows when `quiet` has the announcement.
    const socket = await TestWsClient.connect(quiet.url, { apiKey: user.apiKey });

    // Revoked in the database alone, `quiet` still serves the key from its cache: the key was
    // cached there (a missed announcement is bounded by API_KEY_CACHE_TTL_MS, 10 minutes here).
    await stack.resources.users.revokeApiKey(user.keyId);
    expect((await keyed.get('/v1/conversations')).status).toBe(200);
    expect((await session.get('/v1/conversations')).status).toBe(200);

    await announceRevocation(stack.resources.redis, stack.config.REDIS_PREFIX, user.keyId);
    expect(await socket.whenClosed()).toEqual({ code: 1008, reason: 'the API key was revoked' });
    const refused = await keyed.get('/v1/conversations');
    expect([refused.status, refused.body.error.code]).toEqual([401, 'unauthorized']);
    expect((await session.get('/v1/conversations')).status).toBe(401);
    await expect(TestWsClient.connect(quiet.url, { apiKey: user.apiKey })).rejects.toThrow('HTTP 401');
  }, 30_000);

  it('closes them within KEY_REVOCATION_CHECK_MS when the revocation was not announced', async () => {
    const user = await stack.resources.users.createUserWithKey('revoked-quietly');
    const { conversationId } = await longTurn(user.apiKey);
    const socket = await TestWsClient.connect(sweeping.url, { apiKey: user.apiKey });
    socket.send({ type: 'subscribe', conversationId });
    await socket.waitFor((frame) => frame.type === 'event' && frame.event.type === 'text-delta');

    // Straight in the database, as a revocation made while Redis was down would be.
    await stack.resources.users.revokeApiKey(user.keyId);
    expect(await socket.whenClosed()).toEqual({ code: 1008, reason: 'the API key was revoked' });
  }, 30_000);
});
