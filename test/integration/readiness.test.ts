import http from 'node:http';
import express from 'express';
import { Client } from 'pg';
import { Registry } from 'prom-client';
import { healthRouter } from '../../src/api/health-router';
import { createOpenAiCompatibleProvider } from '../../src/providers/openai-compatible-provider';
import { createReadinessCheck, PROVIDER_CHECK_TTL_MS, type ReadinessDeps } from '../../src/runtime/readiness';
import { connectRedis, whenReady, type RedisClient } from '../../src/redis/redis-connection';
import { listen } from '../../src/runtime/server-helpers';
import { startScriptedModel } from '../../src/scripted-model/scripted-model-server';
import { apiClient } from '../support/http';
import { spawnService, type ServiceProcess } from '../support/processes';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server';
import { dropRedisPrefix, dropSchema, TEST_POSTGRES_URL, TEST_REDIS_URL } from '../support/services';
import { uniqueSuffix } from '../support/ids';

/** A base URL where nothing listens any more: a scripted model, started and closed. */
async function deadProviderUrl(): Promise<string> {
  const scripted = await startScriptedModel();
  await scripted.close();
  return scripted.url;
}

const providerAt = (baseURL: string) => createOpenAiCompatibleProvider({ baseURL, idleTimeoutMs: 5_000 });

/** `/readyz` served by the health router on a real port, over the given checks. */
async function serveReadiness(deps: ReadinessDeps): Promise<{ get: ReturnType<typeof apiClient>['get']; close(): Promise<void> }> {
  const app = express();
  app.use(healthRouter({ checkReady: createReadinessCheck(deps), registry: new Registry() }));
  const server = http.createServer(app);
  const port = await listen(server, 0, '127.0.0.1');
  return { get: apiClient(`http://127.0.0.1:${port}`).get, close: () => new Promise((resolve) => server.close(() => resolve())) };
}

describe('/readyz', () => {
  let db: Client;
  beforeAll(async () => {
    db = new Client({ connectionString: TEST_POSTGRES_URL });
    await db.connect();
  });
  afterAll(() => db.end());

  describe('with Redis and PostgreSQL up', () => {
    let redis: RedisClient;
    beforeAll(async () => {
      redis = connectRedis({ kind: 'single', url: TEST_REDIS_URL }, 'command', 1000);
      await whenReady(redis);
    });
    afterAll(() => redis.quit());

    it('reports each dependency with its latency, the provider included', async () => {
      const scripted = await startScriptedModel();
      const readiness = await serveReadiness({ redis, db, provider: providerAt(scripted.url) });
      try {
        const ready = await readiness.get('/readyz');
        expect(ready.status).toBe(200);
        expect(ready.body).toEqual({
          status: 'ready',
          checks: {
            redis: { ok: true, latencyMs: expect.any(Number) },
            database: { ok: true, latencyMs: expect.any(Number) },
            provider: { ok: true, latencyMs: expect.any(Number), checkedAt: expect.any(String) },
          },
        });
      } finally {
        await readiness.close();
        await scripted.close();
      }
    });

    it('a provider that does not answer is reported with the reason, and the process stays ready (200, degraded)', async () => {
      const readiness = await serveReadiness({ redis, db, provider: providerAt(await deadProviderUrl()) });
      try {
        const ready = await readiness.get('/readyz');
        expect(ready.status).toBe(200);
        expect(ready.headers.get('retry-after')).toBeNull();
        expect(ready.body).toMatchObject({
          status: 'degraded',
          checks: { redis: { ok: true }, database: { ok: true }, provider: { ok: false, error: expect.stringContaining('connection refused') } },
        });
      } finally {
        await readiness.close();
      }
    });

    it("keeps the provider's answer for a while, then asks again", async () => {
      let clock = Date.parse('2030-01-01T00:00:00Z');
      const scripted = await startScriptedModel();
      const check = createReadinessCheck({ redis, db, provider: providerAt(scripted.url), now: () => clock });
      const first = await check();
      expect(first.provider).toMatchObject({ ok: true, checkedAt: '2030-01-01T00:00:00.000Z' });

      await scripted.close();
      clock += PROVIDER_CHECK_TTL_MS - 1;
      // Within the time an answer is kept, the provider is not asked: its going away is not seen yet.
      expect((await check()).provider).toEqual(first.provider);

      clock += 1;
      expect((await check()).provider).toEqual({ ok: false, error: expect.stringContaining('connection refused'), checkedAt: '2030-01-01T00:00:30.000Z' });
    });
  });

  describe('with Redis down', () => {
    let privateRedis: PrivateRedis;
    beforeAll(async () => {
      privateRedis = await startPrivateRedis();
    });
    afterAll(() => privateRedis.close());

    it('answers 503 with Retry-After and says Redis is the one missing', async () => {
      const redis = connectRedis({ kind: 'single', url: privateRedis.url }, 'command', 1000);
      redis.on('error', () => undefined);
      await whenReady(redis);
      const readiness = await serveReadiness({ redis, db });
      try {
        expect((await readiness.get('/readyz')).status).toBe(200);
        await privateRedis.stop();
        const down = await readiness.get('/readyz');
        expect(down.status).toBe(503);
        expect(Number(down.headers.get('retry-after'))).toBeGreaterThan(0);
        expect(down.body).toEqual({
          status: 'unavailable',
          checks: { redis: { ok: false, error: expect.stringContaining('not connected') }, database: { ok: true, latencyMs: expect.any(Number) } },
        });
      } finally {
        await readiness.close();
        redis.disconnect();
      }
    });
  });

  describe('a worker process whose provider is down', () => {
    let worker: ServiceProcess;
    const suffix = uniqueSuffix();
    beforeAll(async () => {
      worker = await spawnService('worker', {
        REDIS_URL: TEST_REDIS_URL,
        REDIS_PREFIX: `test-${suffix}`,
        DATABASE_URL: TEST_POSTGRES_URL,
        DATABASE_SCHEMA: `t_${suffix}`,
        LLM_BASE_URL: await deadProviderUrl(),
      });
    });
    afterAll(async () => {
      await worker.kill();
      await dropRedisPrefix(`test-${suffix}`);
      await dropSchema(`t_${suffix}`);
    });

    it('serves /readyz with the provider failing and the stores up', async () => {
      const ready = await apiClient(worker.url).get('/readyz');
      expect(ready.status).toBe(200);
      expect(ready.body).toMatchObject({
        status: 'degraded',
        checks: { redis: { ok: true }, database: { ok: true }, provider: { ok: false, error: expect.stringContaining('connection refused') } },
      });
    });
  });
});
