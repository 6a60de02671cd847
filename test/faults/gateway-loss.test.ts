import { apiClient } from '../support/http';
import { spawnService, type ServiceProcess } from '../support/processes';
import { rawHandshake } from '../support/raw-websocket';
import { startTestStack, type TestStack } from '../support/stack';
import { TestWsClient } from '../support/ws-client';

/** One key's devices, over both API processes; the cap sized to all of them, as docs/API.md says. */
const DEVICES = 6;
const PER_MINUTE = 20;

/**
 * An API process SIGKILLed under a key's websockets: its clients reconnect to the other API
 * process, which takes them all (WS_MAX_CONNECTIONS_PER_KEY counts per process and is sized to a
 * key's whole need), and clients retrying past the cap there do not spend the user's request rate.
 */
describe('an API process SIGKILLed under websockets', () => {
  let stack: TestStack;
  const processes: ServiceProcess[] = [];
  const clients: TestWsClient[] = [];

  beforeAll(async () => {
    stack = await startTestStack({ workers: 0 });
    const env = stack.childEnv({ WS_MAX_CONNECTIONS_PER_KEY: String(DEVICES), RATE_LIMIT_PER_MINUTE: String(PER_MINUTE) });
    processes.push(...(await Promise.all([spawnService('api', env), spawnService('api', env)])));
  }, 60_000);
  afterAll(async () => {
    for (const client of clients) client.close();
    await Promise.all(processes.map((service) => service.kill('SIGKILL')));
    await stack.close();
  });

  it("moves the dead process's clients to the survivor, and leaves the user's HTTP requests their rate while others retry past the cap", async () => {
    const [doomed, survivor] = processes as [ServiceProcess, ServiceProcess];
    const { apiKey } = await stack.createUser('devices');
    const connect = async (service: ServiceProcess) => {
      const client = await TestWsClient.connect(service.url, { apiKey });
      clients.push(client);
      return client;
    };
    const onDoomed = await Promise.all(Array.from({ length: DEVICES / 2 }, () => connect(doomed)));
    await Promise.all(Array.from({ length: DEVICES / 2 }, () => connect(survivor)));

    await doomed.kill('SIGKILL');
    await Promise.all(onDoomed.map((client) => client.whenClosed()));
    // Every device of the dead process gets in on the survivor at once.
    await Promise.all(onDoomed.map(() => connect(survivor)));

    // A device more keeps trying: refused with Retry-After each time, more times than the user's rate.
    for (let i = 0; i < PER_MINUTE + 5; i++) {
      const refused = await rawHandshake(survivor.url, { headers: { authorization: `Bearer ${apiKey}` } });
      expect({ status: refused.status, retryAfter: Number(refused.headers['retry-after']), code: JSON.parse(refused.body).error.code }).toEqual({
        status: 429,
        retryAfter: expect.any(Number),
        code: 'rate_limited',
      });
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      refused.socket.destroy();
    }
    expect((await apiClient(survivor.url, apiKey).get('/v1/conversations')).status).toBe(200);
  }, 60_000);
});
