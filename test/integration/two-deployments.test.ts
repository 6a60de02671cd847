import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { apiClient } from '../support/http';
import { uniqueSuffix } from '../support/ids';
import { runToExit, spawnAllInOne, spawnService, type AllInOneProcess, type ServiceProcess } from '../support/processes';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server';
import { dropRedisPrefix, TEST_REDIS_URL } from '../support/services';
import { startTestStack, type TestStack } from '../support/stack';
import { copyPgliteTemplate, type TestDataDirCopy } from '../support/template-database';
import { TestWsClient } from '../support/ws-client';

/**
 * Two deployments (two databases) that meet on one Redis never take each other's turns
 * (RELIABILITY case 37): a process whose REDIS_PREFIX belongs to another database's deployment
 * does not start, and `npm start` from two folders uses a prefix per folder.
 */
describe('two deployments on one Redis', () => {
  describe('with one REDIS_PREFIX', () => {
    let stack: TestStack;
    /** Another deployment's schema in the stack's own database, dropped with it. */
    const otherSchema = `t_${uniqueSuffix()}`;
    const services: ServiceProcess[] = [];
    let dataDir: string;

    beforeAll(async () => {
      stack = await startTestStack({ workers: 0 });
      dataDir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-deployment-'));
    });
    afterAll(async () => {
      await Promise.all(services.map((service) => service.kill()));
      await stack.close();
      await rm(dataDir, { recursive: true, force: true });
    });

    it.each(['workers/api.ts', 'workers/worker.ts', 'workers/all-in-one.ts'])(
      '%s of another database refuses to start, in one line naming REDIS_PREFIX',
      async (entry) => {
        const result = await runToExit(
          entry,
          stack.childEnv({ DATABASE_SCHEMA: otherSchema, LOG_LEVEL: 'silent', DATA_DIR: dataDir, PLAYGROUND_DIR: path.join(dataDir, 'playground') }),
        );
        expect(result.code).toBe(1);
        expect(result.stderr.trim().split('\n')).toEqual([
          expect.stringMatching(
            new RegExp(
              `^switchyard: REDIS_PREFIX "${stack.config.REDIS_PREFIX}" on redis://127\\.0\\.0\\.1:6379 belongs to another deployment \\(deployment ${stack.resources.deploymentId}; `,
            ),
          ),
        ]);
      },
      30_000,
    );

    it('processes of the same database start on it, and say which Redis and database they use', async () => {
      services.push(...(await Promise.all([spawnService('api', stack.childEnv()), spawnService('worker', stack.childEnv())])));
      for (const service of services) {
        const started = await service.waitForLog((line) => /started$/.test(line.msg));
        expect(started).toMatchObject({
          redis: `redis://127.0.0.1:6379 (REDIS_PREFIX ${stack.config.REDIS_PREFIX})`,
          database: `PostgreSQL at ${stack.config.DATABASE_URL} (schema ${stack.config.DATABASE_SCHEMA})`,
        });
      }
    }, 30_000);
  });

  describe('npm start from two folders, REDIS_PREFIX unset', () => {
    const copies: TestDataDirCopy[] = [];
    const dataDirs: string[] = [];
    const starts: AllInOneProcess[] = [];

    beforeAll(async () => {
      // Copies of the run's migrated PGlite, each its own deployment: two first starts' initdb is not what is tested.
      for (let i = 0; i < 2; i++) copies.push(await copyPgliteTemplate());
      dataDirs.push(...copies.map((copy) => copy.dataDir));
      starts.push(
        ...(await Promise.all(
          dataDirs.map((dataDir) => spawnAllInOne({ DATA_DIR: dataDir, PLAYGROUND_DIR: path.join(dataDir, 'playground'), REDIS_URL: TEST_REDIS_URL, LOG_LEVEL: 'warn' })),
        )),
      );
    }, 150_000);
    afterAll(async () => {
      await Promise.all(starts.map((start) => start.kill()));
      for (const start of starts) {
        const prefix = /\(REDIS_PREFIX (\S+)\)/.exec(start.redis)?.[1];
        if (prefix) await dropRedisPrefix(prefix);
      }
      await Promise.all(copies.map((copy) => copy.drop()));
    });

    it('each runs its own turns to their end, on a prefix of its own folder', async () => {
      await Promise.all(
        starts.map(async (start) => {
          const api = apiClient(start.url, start.apiKey);
          const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
          const client = await TestWsClient.connect(start.url, { apiKey: start.apiKey });
          client.send({ type: 'subscribe', conversationId });
          await client.waitFor((frame) => frame.type === 'subscribed');
          const turnIds: string[] = [];
          for (let i = 0; i < 3; i++) {
            const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content: `[[scripted {"text":"answer ${i}","tokenDelayMs":5}]]` });
            expect(posted.status).toBe(202);
            turnIds.push(posted.body.turnId as string);
            // One turn at a time in a conversation: the next is posted once this one ended.
            await client.waitForTurnEnd(posted.body.turnId as string);
          }
          const ends = client.events().filter((event) => ['turn-finish', 'turn-error', 'turn-cancelled'].includes(event.type));
          expect(ends.map((event) => [event.turnId, event.type])).toEqual(turnIds.map((turnId) => [turnId, 'turn-finish']));
          client.close();
        }),
      );

      const prefixes = starts.map((start) => /^redis:\/\/127\.0\.0\.1:6379 \(REDIS_PREFIX (switchyard-[0-9a-f]+)\)$/.exec(start.redis)?.[1]);
      expect(prefixes).toEqual([expect.any(String), expect.any(String)]);
      expect(prefixes[0]).not.toBe(prefixes[1]);
      expect(starts.map((start) => start.database)).toEqual(dataDirs.map((dataDir) => `the embedded PGlite in ${path.join(dataDir, 'db')}`));
    }, 90_000);
  });

  describe('on a Redis that comes back empty', () => {
    let redis: PrivateRedis;
    let stack: TestStack;
    /** Another deployment's schema in the stack's own database, dropped with it. */
    const otherSchema = `t_${uniqueSuffix()}`;

    beforeAll(async () => {
      redis = await startPrivateRedis();
      stack = await startTestStack({ workers: 0, env: { REDIS_URL: redis.url } });
    });
    afterAll(async () => {
      await stack.close();
      await redis.close();
    });

    it('the running processes claim the prefix again as they reconnect, and another database is still refused', async () => {
      const key = `${stack.config.REDIS_PREFIX}:deployment`;
      const connection = stack.resources.redis;
      expect(await connection.get(key)).toBe(stack.resources.deploymentId);

      // The claim is sent on this connection's 'ready' by a listener registered at start, so a
      // GET sent from a later listener of the same event is answered after it.
      const reclaimed = new Promise<string | null>((resolve) => connection.once('ready', () => resolve(connection.get(key))));
      await redis.restartEmpty();
      expect(await reclaimed).toBe(stack.resources.deploymentId);

      const other = await runToExit('workers/api.ts', stack.childEnv({ DATABASE_SCHEMA: otherSchema, LOG_LEVEL: 'silent' }));
      expect(other.code).toBe(1);
      expect(other.stderr).toMatch(/^switchyard: REDIS_PREFIX "[^"]+" on redis:\/\/127\.0\.0\.1:\d+ belongs to another deployment/);
    }, 60_000);
  });
});
