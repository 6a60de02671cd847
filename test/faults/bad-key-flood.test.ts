import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { startTestStack, type TestStack } from '../support/stack';

/** A flood of bad keys from one address costs no lookups past its limit, and others keep being served. */
describe('a flood of bad keys', () => {
  let stack: TestStack;
  let lookups = 0;

  beforeAll(async () => {
    stack = await startTestStack({ workers: 0, env: { TRUST_PROXY: 'loopback', AUTH_FAILURES_PER_MINUTE: '20' } });
    const users = stack.resources.users;
    const lookUp = users.findUserByApiKey.bind(users);
    users.findUserByApiKey = (key: string) => {
      lookups++;
      return lookUp(key);
    };
  });
  afterAll(() => stack.close());

  const get = (path: string, key: string, address: string) =>
    fetch(`${stack.url}${path}`, { headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': address } });
  const handshake = (key: string, address: string) =>
    new Promise<number>((resolve) => {
      const socket = new WebSocket(`${stack.url.replace(/^http/, 'ws')}/v1/ws`, { headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': address } });
      socket.once('open', () => {
        socket.close();
        resolve(101);
      });
      socket.once('unexpected-response', (_req, res) => resolve(res.statusCode ?? 0));
      socket.once('error', () => undefined);
    });

  it('refuses the flooding address before any lookup once over AUTH_FAILURES_PER_MINUTE; an honest user elsewhere is served throughout', async () => {
    const { apiKey } = await stack.createUser('honest');
    const statuses: number[] = [];
    const honest: number[] = [];
    for (let round = 0; round < 30; round++) {
      const flood = Array.from({ length: 10 }, () => get('/v1/conversations', `sy_${randomBytes(24).toString('base64url')}`, '203.0.113.7'));
      const served = get('/v1/conversations', apiKey, '198.51.100.9');
      for (const response of await Promise.all(flood)) statuses.push(response.status);
      honest.push((await served).status);
    }
    expect(honest.every((status) => status === 200)).toBe(true);
    expect(statuses.filter((status) => status === 401).length).toBeGreaterThanOrEqual(20);
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThan(250);
    // At most the limit, and what was already in flight when it was reached, ever reached the database.
    const badLookups = lookups - honest.length;
    expect(badLookups).toBeLessThanOrEqual(30);
    const refused = await get('/v1/conversations', apiKey, '203.0.113.7');
    expect([refused.status, Number(refused.headers.get('retry-after'))]).toEqual([429, expect.any(Number)]);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);

    // The websocket handshake is counted the same way.
    expect(await handshake('sy_wrong', '203.0.113.7')).toBe(429);
    expect(await handshake(apiKey, '198.51.100.9')).toBe(101);
  });
});
