import { startTestStack, type TestStack } from '../support/stack';

const ADMIN_TOKEN = 'admin-token-for-tests-0123';
const FAILURES_PER_MINUTE = 5;

/**
 * Credentials on the routes that take a body: wrong admin tokens are counted per client
 * address as wrong API keys are.
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
      },
    });
    apiKey = (await stack.createUser('alice')).apiKey;
  });
  afterAll(() => stack.close());

  const post = (path: string, body: string | Buffer, headers: Record<string, string>) =>
    fetch(`${stack.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const errorOf = async (response: Response) => [response.status, ((await response.json()) as any).error.code];

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
});
