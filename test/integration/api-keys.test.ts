import { apiClient } from '../support/http';
import { poll } from '../support/poll';
import { startTestStack, type TestStack } from '../support/stack';
import { TestWsClient } from '../support/ws-client';

const ADMIN_TOKEN = 'admin-token-for-key-tests-0123';

/**
 * API keys over HTTP (docs/API.md, "Users and auth"): a user makes, lists and revokes their own;
 * the admin those of any user. The API trusts a key it verified for API_KEY_CACHE_TTL_MS (ten
 * minutes here): a revoked key is refused by the next request all the same, because the process
 * that revoked it forgets what it verified, and its open websockets close.
 */
describe('API keys', () => {
  let stack: TestStack;

  beforeAll(async () => {
    stack = await startTestStack({ workers: 0, env: { ADMIN_TOKEN, API_KEY_CACHE_TTL_MS: '600000', KEY_REVOCATION_CHECK_MS: '600000' } });
  });
  afterAll(() => stack.close());

  it("are made, listed and revoked by their user, a revoked one refused at once and its websocket closed; someone else's is a 404", async () => {
    const user = await stack.resources.users.createUserWithKey('kim');
    const first = apiClient(stack.url, user.apiKey);

    const made = await first.post('/v1/keys', { name: 'laptop' });
    expect(made.status).toBe(201);
    expect(made.body).toEqual({ id: expect.stringMatching(/^key_/), name: 'laptop', apiKey: expect.stringMatching(/^sy_/) });
    const laptop = apiClient(stack.url, made.body.apiKey);
    expect((await laptop.get('/v1/conversations')).status).toBe(200);
    const socket = await TestWsClient.connect(stack.url, { apiKey: made.body.apiKey });

    // Its last use is recorded without holding the request up: polled.
    let listed: any;
    await poll('the new key never showed a lastUsedAt', async () => {
      listed = (await first.get('/v1/keys')).body;
      return listed.data[1]?.lastUsedAt !== null;
    });
    expect(listed.data).toEqual([
      { id: user.keyId, name: null, prefix: user.apiKey.slice(0, 9), createdAt: expect.any(String), lastUsedAt: expect.any(String) },
      { id: made.body.id, name: 'laptop', prefix: made.body.apiKey.slice(0, 9), createdAt: expect.any(String), lastUsedAt: expect.any(String) },
    ]);
    expect(JSON.stringify(listed)).not.toContain(made.body.apiKey);

    const revoked = await first.delete(`/v1/keys/${made.body.id}`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: made.body.id, name: 'laptop', revokedAt: expect.any(String) });
    const refused = await laptop.get('/v1/conversations');
    expect([refused.status, refused.body.error.code]).toEqual([401, 'unauthorized']);
    expect((await socket.whenClosed()).code).toBe(1008);
    // Again: answered as it is (idempotent), the same revocation time.
    expect((await first.delete(`/v1/keys/${made.body.id}`)).body.revokedAt).toBe(revoked.body.revokedAt);
    expect((await first.get('/v1/keys')).body.data[1]).toMatchObject({ id: made.body.id, revokedAt: revoked.body.revokedAt });

    const other = await stack.resources.users.createUserWithKey('lee');
    expect((await apiClient(stack.url, other.apiKey).delete(`/v1/keys/${user.keyId}`)).status).toBe(404);
    expect((await apiClient(stack.url, other.apiKey).get('/v1/keys')).body.data.map((key: { id: string }) => key.id)).toEqual([other.keyId]);
    expect((await first.delete('/v1/keys/key_nobody')).status).toBe(404);
    expect((await first.get('/v1/conversations')).status).toBe(200);
  });

  it("refuses a key revoking itself while it is its user's last, lets it once another exists, and refuses bad bodies and session tokens", async () => {
    const user = await stack.resources.users.createUserWithKey('max');
    const only = apiClient(stack.url, user.apiKey);
    const last = await only.delete(`/v1/keys/${user.keyId}`);
    expect([last.status, last.body.error.code]).toEqual([409, 'conflict']);
    expect((await only.get('/v1/keys')).status).toBe(200);

    expect((await only.post('/v1/keys', { name: '' })).status).toBe(400);
    expect((await only.post('/v1/keys', { label: 'x' })).body.error).toMatchObject({ code: 'invalid_request' });
    const unnamed = await only.post('/v1/keys', {});
    expect(unnamed.body).toMatchObject({ name: null });

    const self = await only.delete(`/v1/keys/${user.keyId}`);
    expect(self.status).toBe(200);
    expect((await only.get('/v1/keys')).status).toBe(401);

    const token = (await apiClient(stack.url, unnamed.body.apiKey).post('/v1/session-tokens', {})).body.token as string;
    const session = apiClient(stack.url, token);
    expect((await session.get('/v1/keys')).body.error.code).toBe('forbidden');
    expect((await session.post('/v1/keys', {})).body.error.code).toBe('forbidden');
  });

  it("are made, listed and revoked by the admin for any user, a user's last key too, refused at once", async () => {
    const admin = apiClient(stack.url, ADMIN_TOKEN);
    const user = await stack.resources.users.createUserWithKey('noor');
    const before = apiClient(stack.url, user.apiKey);
    expect((await before.get('/v1/conversations')).status).toBe(200);

    const users = await admin.get('/v1/admin/users');
    expect(users.status).toBe(200);
    expect(users.body.data).toContainEqual({ id: user.id, name: 'noor', allowedTools: null, createdAt: expect.any(String) });

    const added = await admin.post(`/v1/admin/users/${user.id}/keys`, { name: 'ci' });
    expect(added.status).toBe(201);
    expect(added.body).toEqual({ id: expect.stringMatching(/^key_/), name: 'ci', apiKey: expect.stringMatching(/^sy_/) });
    expect((await apiClient(stack.url, added.body.apiKey).get('/v1/conversations')).status).toBe(200);
    const listed = await admin.get(`/v1/admin/users/${user.id}/keys`);
    expect(listed.body.data.map((key: { id: string; name: string | null }) => [key.id, key.name])).toEqual([
      [user.keyId, null],
      [added.body.id, 'ci'],
    ]);

    for (const keyId of [user.keyId, added.body.id]) {
      const revoked = await admin.delete(`/v1/admin/keys/${keyId}`);
      expect(revoked.status).toBe(200);
      expect(revoked.body).toMatchObject({ id: keyId, userId: user.id, revokedAt: expect.any(String) });
    }
    expect((await before.get('/v1/conversations')).status).toBe(401);
    expect((await apiClient(stack.url, added.body.apiKey).get('/v1/conversations')).status).toBe(401);

    expect((await admin.delete('/v1/admin/keys/key_nobody')).status).toBe(404);
    expect((await admin.post('/v1/admin/users/user_nobody/keys', {})).status).toBe(404);
    expect((await apiClient(stack.url, 'wrong-token-of-the-right-length').delete(`/v1/admin/keys/${added.body.id}`)).status).toBe(401);
    expect((await apiClient(stack.url, added.body.apiKey).get('/v1/keys')).status).toBe(401);
  });
});
