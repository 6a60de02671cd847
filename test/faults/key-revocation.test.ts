import { randomUUID } from 'node:crypto';
import { announceRevocation } from '../../src/auth/revocation-watch';
import { apiClient } from '../support/http';
import { runToExit, spawnService, type ServiceProcess } from '../support/processes';
import { startTestStack, type TestStack } from '../support/stack';
import { scripted } from '../support/tool-turns';
import { TestWsClient } from '../support/ws-client';

const REVOKED_EVENT = `event: error\ndata: ${JSON.stringify({ code: 'unauthorized', message: 'the API key was revoked' })}`;

const lastEvent = (text: string) => text.trimEnd().split('\n\n').at(-1);

/**
 * An answer that sends three tokens, then holds the connection (until the provider idle timeout
 * of 60 s): what the key opened is still streaming when the revocation comes, however long that
 * takes (a CLI process alone takes seconds to start on a busy machine).
 */
const UNENDING = scripted({ tokens: 50, stallAfterTokens: 3 });

/**
 * Revoking a key closes what it and the session tokens minted from it opened, on every API
 * process: their websockets (1008), SSE streams (an `error` event `unauthorized`, then the end)
 * and /api/chat streams (an `error` chunk, then `[DONE]`), at once when the revocation is
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

  /** The unending turns a test started, cancelled after it with a new key of their user (theirs is revoked). */
  const unending: { userId: string; turnId: string }[] = [];
  afterEach(async () => {
    for (const { userId, turnId } of unending.splice(0)) {
      const { apiKey } = await stack.resources.users.createApiKey(userId);
      expect((await apiClient(stack.url, apiKey).post(`/v1/turns/${turnId}/cancel`)).status).toBe(200);
    }
  });

  /** A turn's SSE events read with `bearer` (an API key or a session token). */
  const turnEvents = (url: string, bearer: string, turnId: string) => read(fetch(`${url}/v1/turns/${turnId}/events`, { headers: { authorization: `Bearer ${bearer}` } }));

  /** An unending answer streamed through /api/chat with `bearer`. */
  const chat = (url: string, bearer: string) =>
    read(
      fetch(`${url}/api/chat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${bearer}`, 'content-type': 'application/json' },
        body: JSON.stringify({ id: `chat-${randomUUID()}`, messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: UNENDING }] }] }),
      }),
    );

  async function unendingTurn(user: { id: string; apiKey: string }): Promise<{ conversationId: string; turnId: string }> {
    const api = apiClient(stack.url, user.apiKey);
    const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
    const turnId = (await api.post(`/v1/conversations/${conversationId}/turns`, { content: UNENDING })).body.turnId as string;
    unending.push({ userId: user.id, turnId });
    return { conversationId, turnId };
  }

  it('closes its websockets and SSE streams on every API process when the CLI revokes it', async () => {
    const user = await stack.resources.users.createUserWithKey('revoked-by-cli');
    const other = await stack.resources.users.createUserWithKey('bystander');
    const { conversationId, turnId } = await unendingTurn(user);
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
    const sse = turnEvents(quiet.url, user.apiKey, turnId);
    await sse.seen('event: text-delta');

    const revoked = await runToExit('workers/cli.ts', stack.childEnv({ LOG_LEVEL: 'silent' }), ['keys', 'revoke', user.keyId]);
    expect(revoked.code).toBe(0);
    expect(JSON.parse(revoked.stdout)).toEqual({ revoked: user.keyId, revokedAt: expect.any(String), announced: true });

    for (const socket of sockets) expect(await socket.whenClosed()).toEqual({ code: 1008, reason: 'the API key was revoked' });
    expect(lastEvent(await sse.ended)).toBe(REVOKED_EVENT);
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

  it('ends the SSE and /api/chat streams opened with its session tokens on every API process', async () => {
    const user = await stack.resources.users.createUserWithKey('session-streams');
    const { turnId } = await unendingTurn(user);
    const { token } = (await apiClient(stack.url, user.apiKey).post('/v1/session-tokens', {})).body;
    const events = [stack.url, quiet.url].map((url) => turnEvents(url, token as string, turnId));
    const chats = [stack.url, quiet.url].map((url) => chat(url, token as string));
    for (const stream of [...events, ...chats]) await stream.seen('text-delta');
    // `start.messageId` is the chat's turn.
    for (const stream of chats) unending.push({ userId: user.id, turnId: JSON.parse(stream.text().split('\n\n')[0]!.slice('data: '.length)).messageId });

    // Neither process sweeps within the test: only the announcement can end them.
    await stack.resources.users.revokeApiKey(user.keyId);
    await announceRevocation(stack.resources.redis, stack.config.REDIS_PREFIX, user.keyId);
    for (const stream of events) expect(lastEvent(await stream.ended)).toBe(REVOKED_EVENT);
    for (const stream of chats) {
      const blocks = (await stream.ended).trimEnd().split('\n\n');
      expect(blocks.slice(-2)).toEqual([`data: ${JSON.stringify({ type: 'error', errorText: 'unauthorized: the API key was revoked' })}`, 'data: [DONE]']);
    }
  }, 30_000);

  it('closes them within KEY_REVOCATION_CHECK_MS when the revocation was not announced', async () => {
    const user = await stack.resources.users.createUserWithKey('revoked-quietly');
    const { conversationId, turnId } = await unendingTurn(user);
    const { token } = (await apiClient(stack.url, user.apiKey).post('/v1/session-tokens', {})).body;
    const socket = await TestWsClient.connect(sweeping.url, { apiKey: user.apiKey });
    socket.send({ type: 'subscribe', conversationId });
    await socket.waitFor((frame) => frame.type === 'event' && frame.event.type === 'text-delta');
    const events = [user.apiKey, token as string].map((bearer) => turnEvents(sweeping.url, bearer, turnId));
    for (const stream of events) await stream.seen('event: text-delta');

    // Straight in the database, as a revocation made while Redis was down would be.
    await stack.resources.users.revokeApiKey(user.keyId);
    expect(await socket.whenClosed()).toEqual({ code: 1008, reason: 'the API key was revoked' });
    for (const stream of events) expect(lastEvent(await stream.ended)).toBe(REVOKED_EVENT);
  }, 30_000);
});

/**
 * A stream as a test reads it: `seen` waits for a piece of its text (and rejects if the stream
 * ends without it); `text` is what came so far; `ended` resolves with all of it once the server
 * ends the stream.
 */
function read(request: Promise<Response>): { seen(part: string): Promise<void>; text(): string; ended: Promise<string> } {
  let text = '';
  const readers = new Set<() => void>();
  const ended = request.then(async (response) => {
    if (response.status !== 200) throw new Error(`the stream was refused: ${response.status} ${await response.text()}`);
    const decoder = new TextDecoder();
    for await (const chunk of response.body!) {
      text += decoder.decode(chunk as Uint8Array, { stream: true });
      for (const reader of [...readers]) reader();
    }
    return text;
  });
  const seen = (part: string) =>
    new Promise<void>((resolve, reject) => {
      const check = () => {
        if (!text.includes(part)) return;
        readers.delete(check);
        resolve();
      };
      readers.add(check);
      check();
      ended.then(() => reject(new Error(`the stream ended without ${part}: ${text.slice(-300)}`)), reject);
    });
  return { seen, text: () => text, ended };
}
