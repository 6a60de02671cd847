import { uniqueSuffix } from '../support/ids';
import { runToExit } from '../support/processes';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server';
import { dropSchema, TEST_POSTGRES_URL } from '../support/services';

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
    expect(result.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^switchyard: Redis maxmemory-policy is "allkeys-lru": set it to "noeviction"/),
    ]);
  });
});
