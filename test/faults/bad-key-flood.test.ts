import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import WebSocket from 'ws';
import { rawHandshake } from '../support/raw-websocket';
import { RedisMonitor } from '../support/redis-monitor';
import { TEST_REDIS_URL } from '../support/services';
import { startTestStack, type TestStack } from '../support/stack';

/** A flood of bad keys from one address costs no lookups past its limit, and others keep being served. */
describe('a flood of bad keys', () => {
  let stack: TestStack;
  /** The key of every lookup the API made, in order: the flood's and the honest user's told apart. */
  const lookedUp: string[] = [];
  const redisConnections: Redis[] = [];
  const monitors: RedisMonitor[] = [];

  beforeAll(async () => {
    stack = await startTestStack({ workers: 0, env: { TRUST_PROXY: 'loopback', AUTH_FAILURES_PER_MINUTE: '20' } });
    const users = stack.resources.users;
    const lookUp = users.findUserByApiKey.bind(users);
    users.findUserByApiKey = (key: string) => {
      lookedUp.push(key);
      return lookUp(key);
    };
  });
  afterAll(async () => {
    for (const connection of redisConnections) connection.disconnect();
    for (const monitor of monitors) monitor.close();
    await stack.close();
  });

  const get = (path: string, key: string, address: string) => fetch(`${stack.url}${path}`, { headers: { authorization: `Bearer ${key}`, 'x-forwarded-for': address } });
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

  /**
   * 30 rounds of 10 flood requests from one address beside one request of an honest user from
   * another: the flood's statuses and the honest user's.
   */
  const flood = async (send: () => Promise<Response>, honestKey: string, honestAddress: string) => {
    const statuses: number[] = [];
    const honest: number[] = [];
    for (let round = 0; round < 30; round++) {
      const requests = Array.from({ length: 10 }, send);
      const served = get('/v1/conversations', honestKey, honestAddress);
      for (const response of await Promise.all(requests)) statuses.push(response.status);
      honest.push((await served).status);
    }
    return { statuses, honest };
  };

  /** Every command the Redis runs on this stack's keys (its prefix is its own on the shared Redis), through MONITOR. */
  const watchStackCommands = async () => {
    const prefix = stack.config.REDIS_PREFIX;
    const monitor = await RedisMonitor.start(TEST_REDIS_URL);
    const marker = new Redis(TEST_REDIS_URL);
    monitors.push(monitor);
    redisConnections.push(marker);
    const seen: string[][] = [];
    monitor.on('command', (args: string[]) => {
      if (args.some((arg) => arg.includes(`${prefix}:`))) seen.push(args);
    });
    // Commands reach the monitor in the order Redis ran them: one of ours marks where a phase ends.
    const markEnd = async (name: string) => {
      const mark = `${prefix}:phase-end:${name}`;
      await marker.exists(mark);
      while (!seen.some((args) => args.includes(mark))) await new Promise((resolve) => monitor.once('command', resolve));
      return seen.findIndex((args) => args.includes(mark));
    };
    const start = await markEnd('start');
    /** The commands since the watch began, up to now. */
    return async () => seen.slice(start + 1, await markEnd('now'));
  };

  it('refuses the flooding address before any lookup once over AUTH_FAILURES_PER_MINUTE; an honest user elsewhere is served throughout', async () => {
    const { id, apiKey } = await stack.createUser('honest');
    const stackCommands = await watchStackCommands();
    const lookupsBefore = lookedUp.length;
    const { statuses, honest } = await flood(() => get('/v1/conversations', `sy_${randomBytes(24).toString('base64url')}`, '203.0.113.7'), apiKey, '198.51.100.9');
    const during = await stackCommands();
    expect(honest.every((status) => status === 200)).toBe(true);
    expect(statuses.filter((status) => status === 401).length).toBeGreaterThanOrEqual(20);
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThan(250);
    // Exactly the limit reached the database: the rounds of ten wait for each other, so none was
    // in flight when the address reached it (the honest user's lookups, most saved by the cache, aside).
    expect(lookedUp.slice(lookupsBefore).filter((key) => key !== apiKey)).toHaveLength(20);
    // Nor Redis: besides the honest user's rate-limit counting, its commands stayed far below one per flood request.
    const honestRateKey = `${stack.config.REDIS_PREFIX}:rate:${id}`;
    expect(during.filter((args) => args.includes(honestRateKey)).length).toBeGreaterThanOrEqual(honest.length);
    expect(during.filter((args) => !args.includes(honestRateKey)).length).toBeLessThan(statuses.length / 10);
    const refused = await get('/v1/conversations', apiKey, '203.0.113.7');
    expect([refused.status, Number(refused.headers.get('retry-after'))]).toEqual([429, expect.any(Number)]);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);

    // The websocket handshake is counted the same way.
    expect(await handshake('sy_wrong', '203.0.113.7')).toBe(429);
    expect(await handshake(apiKey, '198.51.100.9')).toBe(101);
  });

  it('refuses a flood with no Authorization header the same way, at no Redis command per request; an honest user elsewhere is served throughout', async () => {
    const honestUser = await stack.createUser('honest-too');
    const honestRateKey = `${stack.config.REDIS_PREFIX}:rate:${honestUser.id}`;
    const stackCommands = await watchStackCommands();
    const lookupsBefore = lookedUp.length;
    const missing = (address: string) => fetch(`${stack.url}/v1/conversations`, { headers: { 'x-forwarded-for': address } });
    const { statuses, honest } = await flood(() => missing('203.0.113.8'), honestUser.apiKey, '198.51.100.10');
    const during = await stackCommands();
    expect(honest.every((status) => status === 200)).toBe(true);
    expect(statuses.filter((status) => status === 401).length).toBeGreaterThanOrEqual(20);
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThan(250);
    expect(statuses.every((status) => status === 401 || status === 429)).toBe(true);
    // A missing key is never looked up: every lookup was the honest user's.
    expect(lookedUp.slice(lookupsBefore).filter((key) => key !== honestUser.apiKey)).toEqual([]);
    // The monitor saw this stack's commands: the honest user's requests were counted in Redis...
    expect(during.filter((args) => args.includes(honestRateKey)).length).toBeGreaterThanOrEqual(honest.length);
    // ...and anything else on its keys (the flood, or the stack's own background work) stayed far below one per flood request.
    const others = during.filter((args) => !args.includes(honestRateKey));
    expect(others.length).toBeLessThan(statuses.length / 10);

    // Past the limit the address is refused whatever it sends, and so is its handshake with no credentials.
    const refused = await get('/v1/conversations', honestUser.apiKey, '203.0.113.8');
    expect(refused.status).toBe(429);
    const upgrade = await rawHandshake(stack.url, { headers: { 'x-forwarded-for': '203.0.113.8' } });
    upgrade.socket.destroy();
    expect([upgrade.status, JSON.parse(upgrade.body).error.code]).toEqual([429, 'rate_limited']);
    expect(await handshake(honestUser.apiKey, '198.51.100.10')).toBe(101);
  });
});
