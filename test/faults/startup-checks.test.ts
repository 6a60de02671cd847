import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { uniqueSuffix } from '../support/ids';
import { runToExit } from '../support/processes';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server';
import { dropRedisPrefix, dropSchema, TEST_POSTGRES_URL, TEST_REDIS_URL } from '../support/services';

/** A Redis that may evict keys would drop queued turns: every process refuses to start on one. */
describe('start-up checks of Redis', () => {
  let evicting: PrivateRedis;
  const schema = `t_${uniqueSuffix()}`;

  beforeAll(async () => {
    evicting = await startPrivateRedis(['--maxmemory-policy', 'allkeys-lru']);
  });
  afterAll(async () => {
    await evicting.close();
    await dropSchema(schema);
  });

  it.each(['workers/api.ts', 'workers/worker.ts'])('%s refuses a Redis whose maxmemory-policy is not noeviction, in one line', async (entry) => {
    const result = await runToExit(entry, {
      DATABASE_URL: TEST_POSTGRES_URL,
      DATABASE_SCHEMA: schema,
      REDIS_URL: evicting.url,
      REDIS_PREFIX: `test-${uniqueSuffix()}`,
      LOG_LEVEL: 'silent',
    });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^switchyard: Redis maxmemory-policy is "allkeys-lru": set it to "noeviction"/)]);
  });
});

/** A port another program holds: every process that listens says so in one line naming PORT. */
describe('start-up checks of the port', () => {
  let holder: net.Server;
  let port: number;
  let dataDir: string;
  const suffix = uniqueSuffix();

  beforeAll(async () => {
    holder = net.createServer();
    await new Promise<void>((resolve) => holder.listen(0, '127.0.0.1', resolve));
    port = (holder.address() as net.AddressInfo).port;
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-port-'));
  });
  afterAll(async () => {
    await new Promise((resolve) => holder.close(resolve));
    await dropRedisPrefix(`test-${suffix}`);
    await dropSchema(`t_${suffix}`);
    await rm(dataDir, { recursive: true, force: true });
  });

  it.each(['workers/api.ts', 'workers/worker.ts', 'workers/all-in-one.ts', 'workers/scripted-model.ts'])(
    '%s on a port in use exits with one line naming PORT',
    async (entry) => {
      const result = await runToExit(entry, {
        PORT: String(port),
        DATABASE_URL: TEST_POSTGRES_URL,
        DATABASE_SCHEMA: `t_${suffix}`,
        REDIS_URL: TEST_REDIS_URL,
        REDIS_PREFIX: `test-${suffix}`,
        DATA_DIR: dataDir,
        PLAYGROUND_DIR: path.join(dataDir, 'playground'),
        LOG_LEVEL: 'silent',
      });
      expect(result.code).toBe(1);
      expect(result.stderr.trim().split('\n')).toEqual([
        `switchyard: PORT ${port} on 127.0.0.1 is already in use (another Switchyard, or another program): stop it, or set PORT to a free port (0 picks one)`,
      ]);
    },
    60_000,
  );
});
