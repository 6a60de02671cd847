import { createHash, randomBytes } from 'node:crypto';
import { sessionTokenMayFollow, sessionTokenMayUse } from '../../src/api/session-scope';
import { announceRevocation } from '../../src/auth/revocation-watch';
import { apiClient } from '../support/http';
import { poll } from '../support/poll';
import { rawHandshake } from '../support/raw-websocket';
import { startTestStack, type TestStack } from '../support/stack';
import { scripted } from '../support/tool-turns';
import { TestWsClient } from '../support/ws-client';

/** Session tokens: minted with an API key, for browsers; they read and cancel, never manage. */
describe('POST /v1/session-tokens', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startTestStack({ env: { KEY_REVOCATION_CHECK_MS: '200' } });
  });
  afterAll(() => stack.close());

  it('mints a token that reads conversations and turns, makes conversations and turns, cancels, and gets websocket tickets, but manages nothing', async () => {
    const user = await stack.resources.users.createUserWithKey('browser-user');
    const keyed = apiClient(stack.url, user.apiKey);
    const minted = await keyed.post('/v1/session-tokens', {});
    expect(minted.status).toBe(201);
    expect(minted.body.token).toMatch(/^sst_/);
    const lifetime = Date.parse(minted.body.expiresAt) - Date.now();
    expect(lifetime).toBeGreaterThan(890_000);
    expect(lifetime).toBeLessThanOrEqual(900_000);
    const short = await keyed.post('/v1/session-tokens', { ttlSeconds: 120 });
    expect(Date.parse(short.body.expiresAt) - Date.now()).toBeLessThanOrEqual(120_000);
    const ttls = await Promise.all((await stack.resources.redis.keys(`${stack.config.REDIS_PREFIX}:session:*`)).map((key) => stack.resources.redis.ttl(key)));
    expect(ttls.sort((a, b) => a - b)).toEqual([expect.any(Number), expect.any(Number)]);
    expect(ttls[0]).toBeLessThanOrEqual(120);
    expect((await keyed.post('/v1/session-tokens', { ttlSeconds: 5 })).status).toBe(400);

    const conversationId = (await keyed.post('/v1/conversations', {})).body.id as string;
    const turnId = (await keyed.post(`/v1/conversations/${conversationId}/turns`, { content: scripted({ tokens: 500, tokenDelayMs: 10 }) })).body.turnId as string;

    const session = apiClient(stack.url, minted.body.token);
    expect((await session.get('/v1/conversations')).status).toBe(200);
    expect((await session.get(`/v1/conversations/${conversationId}`)).status).toBe(200);
    expect((await session.get(`/v1/turns/${turnId}`)).status).toBe(200);
    const { ticket } = (await session.post('/v1/ws-tickets')).body;
    const socket = await TestWsClient.subscribed(stack.url, { ticket }, conversationId);
    expect((await session.post(`/v1/turns/${turnId}/cancel`)).body.status).toBe('cancelled');

    // It makes conversations and posts turns; their tools are the backend's (test/integration/agents/session-token-agents.test.ts).
    const own = await session.post('/v1/conversations', { title: 'from a browser' });
    expect(own.status).toBe(201);
    const posted = await session.post(`/v1/conversations/${own.body.id}/turns`, { content: scripted({ text: 'hi' }) });
    expect(posted.status).toBe(202);
    // Answering a client tool is open to it (this turn has no such call: not found, not forbidden).
    const answered = await session.post(`/v1/turns/${turnId}/tool-results`, { toolCallId: 'call_0', result: 1 });
    expect(answered.status).not.toBe(403);

    for (const [method, path] of [
      ['DELETE', `/v1/conversations/${conversationId}`],
      ['POST', `/v1/conversations/${conversationId}/fork`],
      ['POST', '/v1/session-tokens'],
      ['GET', '/v1/tools'],
    ] as const) {
      const refused = await session.request(method, path, method === 'GET' || method === 'DELETE' ? undefined : {});
      expect([method, path, refused.status, refused.body.error.code]).toEqual([method, path, 403, 'forbidden']);
      expect(refused.body.error.message).toContain('this route needs the API key');
    }
    // Another user's data stays unseen, as with their key.
    const other = await stack.resources.users.createUserWithKey('someone-else');
    const theirs = (await apiClient(stack.url, other.apiKey).post('/v1/conversations', {})).body.id as string;
    expect((await session.get(`/v1/conversations/${theirs}`)).status).toBe(404);

    // Revoking the key ends its session tokens, and what they opened.
    await stack.resources.users.revokeApiKey(user.keyId);
    await announceRevocation(stack.resources.redis, stack.config.REDIS_PREFIX, user.keyId);
    expect(await socket.whenClosed()).toEqual({ code: 1008, reason: 'the API key was revoked' });
    expect((await session.get('/v1/conversations')).status).toBe(401);
  });

  it('follows no batch over the websocket, as over HTTP: a forbidden error frame, through a ticket or its own handshake', async () => {
    const user = await stack.resources.users.createUserWithKey('batch-owner');
    const keyed = apiClient(stack.url, user.apiKey);
    const batchId = (await keyed.post('/v1/batches', { items: [{ messages: [scripted({ text: 'done' })] }] })).body.batchId as string;
    const conversationId = (await keyed.post('/v1/conversations', {})).body.id as string;
    const token = (await keyed.post('/v1/session-tokens', {})).body.token as string;
    const session = apiClient(stack.url, token);
    const refusedOverHttp = await session.get(`/v1/batches/${batchId}/events`);
    expect([refusedOverHttp.status, refusedOverHttp.body.error.code]).toEqual([403, 'forbidden']);

    const viaTicket = await TestWsClient.connect(stack.url, { ticket: (await session.post('/v1/ws-tickets')).body.ticket });
    const viaHeader = await TestWsClient.connect(stack.url, { apiKey: token });
    for (const socket of [viaTicket, viaHeader]) {
      socket.send({ type: 'subscribe', batchId });
      expect(await socket.waitFor((frame) => frame.type === 'error')).toMatchObject({ code: 'forbidden', batchId });
      // What a session token may read, it reads here too.
      socket.send({ type: 'subscribe', conversationId });
      expect(await socket.waitFor((frame) => frame.type === 'subscribed')).toMatchObject({ conversationId });
      expect(socket.frames.filter((frame) => frame.batchId !== undefined && frame.type !== 'error')).toEqual([]);
      socket.close();
    }
    // The key itself follows it.
    const keyedSocket = await TestWsClient.connect(stack.url, { apiKey: user.apiKey });
    keyedSocket.send({ type: 'subscribe', batchId });
    expect(await keyedSocket.waitFor((frame) => frame.type === 'subscribed')).toEqual({ type: 'subscribed', batchId });
    keyedSocket.close();
  });

  it('limits a session token to the routes the contract names', () => {
    expect(sessionTokenMayUse('GET', '/v1/turns/turn_1/events')).toBe(true);
    expect(sessionTokenMayUse('POST', '/v1/turns/turn_1/cancel')).toBe(true);
    expect(sessionTokenMayUse('POST', '/api/chat')).toBe(true);
    expect(sessionTokenMayUse('GET', '/api/chat/my-chat/stream')).toBe(true);
    expect(sessionTokenMayUse('GET', '/api/chat/my-chat/messages')).toBe(true);
    expect(sessionTokenMayUse('POST', '/v1/turns/turn_1/tool-results')).toBe(true);
    expect(sessionTokenMayUse('POST', '/v1/conversations')).toBe(true);
    expect(sessionTokenMayUse('POST', '/v1/conversations/c/turns')).toBe(true);
    expect(sessionTokenMayUse('POST', '/v1/conversations/c/fork')).toBe(false);
    expect(sessionTokenMayUse('POST', '/v1/conversations/c/compact')).toBe(false);
    expect(sessionTokenMayUse('DELETE', '/v1/conversations/c')).toBe(false);
    expect(sessionTokenMayUse('GET', '/v1/admin/users')).toBe(false);
    // The websocket follows what the HTTP routes serve.
    expect(sessionTokenMayFollow({ conversationId: 'conv_1' })).toBe(true);
    expect(sessionTokenMayFollow({ batchId: 'batch_1' })).toBe(false);
    expect(sessionTokenMayFollow({ conversationId: '../batches/b/events' })).toBe(true);
  });

  it('ends an /api/chat stream with an error chunk when the key it was opened with is revoked; the turn goes on', async () => {
    const user = await stack.resources.users.createUserWithKey('chat-revoked');
    const response = await fetch(`${stack.url}/api/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${user.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: `revoked-${Date.now()}`, messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: scripted({ tokens: 2_000, tokenDelayMs: 10 }) }] }] }),
    });
    expect(response.status).toBe(200);
    const decoder = new TextDecoder();
    let text = '';
    let revoked = false;
    for await (const chunk of response.body!) {
      text += decoder.decode(chunk as Uint8Array, { stream: true });
      // Revoked once text is streaming.
      if (!revoked && text.includes('"type":"text-delta"')) {
        revoked = true;
        await stack.resources.users.revokeApiKey(user.keyId);
      }
    }
    expect(revoked).toBe(true);
    const blocks = text.trimEnd().split('\n\n');
    expect(blocks.at(-1)).toBe('data: [DONE]');
    expect(JSON.parse(blocks.at(-2)!.slice('data: '.length))).toEqual({ type: 'error', errorText: 'unauthorized: the API key was revoked' });
    const turnId = JSON.parse(blocks[0]!.slice('data: '.length)).messageId;
    const turn = await stack.resources.turns.get(turnId);
    expect(turn?.status).not.toBe('cancelled');
  });
});

describe('an expired session token', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startTestStack({ env: { SESSION_TOKEN_TTL_SECONDS: '1' } });
  });
  afterAll(() => stack.close());

  it('answers 401 token_expired everywhere it was accepted once its SESSION_TOKEN_TTL_SECONDS are over', async () => {
    const user = await stack.resources.users.createUserWithKey('short-lived');
    const minted = (await apiClient(stack.url, user.apiKey).post('/v1/session-tokens', {})).body;
    const session = apiClient(stack.url, minted.token);
    const lifetime = Date.parse(minted.expiresAt) - Date.now();
    expect(lifetime).toBeLessThanOrEqual(1_000);
    const chat = () => session.post('/api/chat', { id: 'short', messages: [{ id: 'm', role: 'user', parts: [{ type: 'text', text: scripted({ text: 'hi' }) }] }] });
    // Expiry emits nothing to wait for: poll Redis until its key is gone, bounded by twice the TTL.
    const key = `${stack.config.REDIS_PREFIX}:session:${createHash('sha256').update(minted.token).digest('hex')}`;
    await poll('the session token did not expire', async () => (await stack.resources.redis.exists(key)) === 0, 2000);
    for (const refused of [await session.get('/v1/conversations'), await session.post('/v1/ws-tickets'), await chat(), await session.post('/v1/conversations', {})]) {
      expect([refused.status, refused.body.error.code]).toEqual([401, 'token_expired']);
      expect(refused.body.error.message).toContain('the session token has expired');
    }
    // One of the right shape that was never minted is a wrong token, not an expired one.
    const forged = await apiClient(stack.url, `sst_${randomBytes(32).toString('base64url')}`).get('/v1/conversations');
    expect([forged.status, forged.body.error.code]).toEqual([401, 'unauthorized']);
    // The key it came from still works.
    expect((await apiClient(stack.url, user.apiKey).get('/v1/conversations')).status).toBe(200);
  });

  it('is refused at the websocket handshake with 401 token_expired once expired, forged and malformed ones with 401 unauthorized; a valid one is let in', async () => {
    const user = await stack.resources.users.createUserWithKey('short-lived-socket');
    const keyed = apiClient(stack.url, user.apiKey);
    const expiring = (await keyed.post('/v1/session-tokens', {})).body.token as string;
    const valid = (await keyed.post('/v1/session-tokens', { ttlSeconds: 120 })).body.token as string;
    const refusedUpgrade = async (token: string) => {
      const answer = await rawHandshake(stack.url, { headers: { authorization: `Bearer ${token}` } });
      answer.socket.destroy();
      return [answer.status, answer.status === 101 ? null : JSON.parse(answer.body).error.code, answer.headers.upgrade];
    };
    // Expiry emits nothing to wait for: poll Redis until its key is gone, bounded by twice the TTL.
    const key = `${stack.config.REDIS_PREFIX}:session:${createHash('sha256').update(expiring).digest('hex')}`;
    await poll('the session token did not expire', async () => (await stack.resources.redis.exists(key)) === 0, 2000);
    expect(await refusedUpgrade(expiring)).toEqual([401, 'token_expired', undefined]);
    // Right prefix and shape, never minted; then malformed ones.
    const forged = `sst_${randomBytes(32).toString('base64url')}`;
    expect(forged.length).toBe(valid.length);
    for (const bad of [forged, 'sst_', 'sst_short', `${valid}x`, `sst_${'!'.repeat(43)}`, valid.slice(0, -1)]) {
      expect([bad, ...(await refusedUpgrade(bad))]).toEqual([bad, 401, 'unauthorized', undefined]);
    }
    expect(await TestWsClient.connect(stack.url, { apiKey: forged }).catch((error: Error) => error.message)).toContain('HTTP 401');
    const client = await TestWsClient.connect(stack.url, { apiKey: valid });
    client.close();
  });
});
