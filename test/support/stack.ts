import { loadConfig, type Config } from '../../src/config/config';
import { createLogger } from '../../src/logging/logger';
import { createResources, type Resources } from '../../src/runtime/resources';
import { startApi, type RunningApi } from '../../src/runtime/start-api';
import { startWorker, type RunningWorker } from '../../src/runtime/start-worker';
import { startScriptedModel, type ScriptedModel } from '../../src/scripted-model/scripted-model-server';
import { uniqueSuffix } from './ids';
import { dropRedisPrefix, dropSchema, TEST_POSTGRES_URL, TEST_REDIS_URL } from './services';
import { copyPgliteTemplate, copyTemplateDatabase, type TestDataDirCopy, type TestDatabaseCopy } from './template-database';

export interface TestStack {
  config: Config;
  resources: Resources;
  api: RunningApi;
  url: string;
  scripted: ScriptedModel;
  /** The in-process workers running now, oldest first. */
  workers: RunningWorker[];
  /** Starts one more in-process worker on the stack's resources. */
  addWorker(): Promise<RunningWorker>;
  /** Stops a worker as a SIGTERM would (its jobs get SHUTDOWN_GRACE_MS, then are handed back). */
  stopWorker(worker: RunningWorker): Promise<void>;
  /** A user of this stack with its API key. */
  createUser(name?: string): Promise<{ id: string; apiKey: string }>;
  /** Environment for child processes that join this stack (same Redis prefix, schema, model). */
  childEnv(extra?: Record<string, string>): Record<string, string>;
  close(): Promise<void>;
}

export interface TestStackOptions {
  /** In-process workers (0 for tests that run workers as child processes). */
  workers?: number;
  database?: 'postgres' | 'pglite';
  env?: Record<string, string>;
  scripted?: ScriptedModel;
  /**
   * REDIS_CLUSTER_NODES of a private cluster (test/support/redis-cluster.ts) to run on instead
   * of the shared Redis; the cluster is the test's own, so nothing is dropped from it at close.
   */
  redisClusterNodes?: string;
  /** The clock the in-process workers' turns read. */
  now?: () => Date;
}

/**
 * A whole Switchyard in this process: API + gateway + workers on real Redis (own key prefix)
 * and real PostgreSQL or PGlite, talking to the scripted model over HTTP. On PostgreSQL the
 * stack has a database of its own, a copy of the run's migrated template; a test that gives its
 * own DATABASE_URL or DATABASE_LISTEN_URL (a proxy in front of the server) gets a fresh schema
 * on that server's database instead, migrated as the stack starts. On PGlite it has a DATA_DIR
 * of its own (unless the test gives one) holding a copy of the migrated PGlite.
 */
export async function startTestStack(options: TestStackOptions = {}): Promise<TestStack> {
  const suffix = uniqueSuffix();
  const ownDatabase = options.database !== 'pglite' && !options.env?.DATABASE_URL && !options.env?.DATABASE_LISTEN_URL;
  const copy: TestDatabaseCopy | undefined = ownDatabase ? await copyTemplateDatabase() : undefined;
  const dataDirCopy: TestDataDirCopy | undefined = options.database === 'pglite' && !options.env?.DATA_DIR ? await copyPgliteTemplate() : undefined;
  const scripted = options.scripted ?? (await startScriptedModel());
  const env: Record<string, string> = {
    PORT: '0',
    ...(options.redisClusterNodes ? { REDIS_CLUSTER_NODES: options.redisClusterNodes } : { REDIS_URL: TEST_REDIS_URL }),
    REDIS_PREFIX: `test-${suffix}`,
    DATABASE_SCHEMA: copy?.schema ?? dataDirCopy?.schema ?? `t_${suffix}`,
    ...(dataDirCopy ? { DATA_DIR: dataDirCopy.dataDir } : {}),
    LLM_BASE_URL: scripted.url,
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    LOCK_DURATION_MS: '4000',
    // Every test client is 127.0.0.1: one address sending many a bad key on purpose.
    AUTH_FAILURES_PER_MINUTE: '100000',
    STALLED_INTERVAL_MS: '1000',
    // Off unless a test asks (or TEST_LOCAL_TURN_STARTS=true runs a suite with it): the stack is
    // API and workers in one process, and tests that watch a turn's job, or a worker process
    // run it, would see the in-process workers start it at once instead.
    LOCAL_TURN_STARTS: process.env.TEST_LOCAL_TURN_STARTS ?? 'false',
    ...(options.database === 'pglite' ? {} : { DATABASE_URL: copy?.url ?? TEST_POSTGRES_URL }),
    ...options.env,
  };
  const config = loadConfig({}, env);
  const logger = createLogger(config.LOG_LEVEL);
  const resources = await createResources(config, logger);
  const workers: RunningWorker[] = [];
  const workerOptions = { withHealthServer: false, ...(options.now ? { now: options.now } : {}) };
  for (let i = 0; i < (options.workers ?? 1); i++) workers.push(await startWorker(resources, workerOptions));
  const api = await startApi(resources);

  return {
    config,
    resources,
    api,
    url: api.url,
    scripted,
    workers,
    async addWorker() {
      const worker = await startWorker(resources, workerOptions);
      workers.push(worker);
      return worker;
    },
    async stopWorker(worker) {
      workers.splice(workers.indexOf(worker), 1);
      await worker.close();
    },
    async createUser(name = 'user') {
      const user = await resources.users.createUserWithKey(name);
      return { id: user.id, apiKey: user.apiKey };
    },
    childEnv(extra = {}) {
      return { ...env, ...(config.DATABASE_URL ? { DATABASE_URL: config.DATABASE_URL } : {}), ...extra };
    },
    async close() {
      await api.close();
      for (const worker of workers) await worker.close();
      await resources.close();
      if (!options.scripted) await scripted.close();
      if (!options.redisClusterNodes) await dropRedisPrefix(config.REDIS_PREFIX);
      if (copy) await copy.drop();
      else if (config.DATABASE_URL) await dropSchema(config.DATABASE_SCHEMA);
      await dataDirCopy?.drop();
    },
  };
}
