import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { connectRedis, DATABASE_URL, dropRedisKeys, dropSchemas, REDIS_URL } from './backing-services';
import { startChild, type RunningChild } from './child-process';
import { freePort } from './free-port';
import { REPO_ROOT } from './repo-root';
import type { RunContext } from './run-context';

export type Topology = 'all-in-one' | 'api-and-workers';

export interface StackOptions {
  /** The case's name: it names the Redis prefix, the schema, the logs and the profiles. */
  name: string;
  topology: Topology;
  /** API processes of `api-and-workers`, each with its gateway. Default 1. */
  apis?: number;
  /** Worker processes of `api-and-workers`. Default 2. */
  workers?: number;
  /** Extra settings (WORKER_CONCURRENCY, EVENT_LOG_TTL_SECONDS…). */
  env?: Record<string, string>;
}

export interface ServiceRole {
  role: 'all-in-one' | 'api' | 'worker';
  process: RunningChild;
}

export interface SwitchyardStack {
  url: string;
  /** Every API process's URL (`url` is the first). */
  urls: string[];
  apiKey: string;
  redisPrefix: string;
  schema: string;
  services: ServiceRole[];
  /** The settings the service processes got (for RESULTS.md). */
  settings: Record<string, string>;
  /** The service processes and the scripted model, for the CPU meter. */
  meteredProcesses(): { name: string; pid: number }[];
  /** Stops the processes, then drops the case's Redis keys and schema. */
  stop(): Promise<void>;
}

const execFileAsync = promisify(execFile);

/**
 * Starts Switchyard as real processes on the run's scripted model, Redis and PostgreSQL, with
 * a Redis prefix and a schema of its own. LOG_LEVEL=warn: a request log line per token would
 * measure pino, not Switchyard.
 */
export async function startSwitchyard(context: RunContext, options: StackOptions): Promise<SwitchyardStack> {
  const slug = options.name.replace(/[^a-z0-9]+/g, '_');
  const redisPrefix = `${context.redisPrefix}-${slug}`;
  const schema = `${context.schemaPrefix}_${slug}`.slice(0, 63);
  const dataDir = path.join(context.tempDir, `${slug}-data`);
  const toolsDir = path.join(context.tempDir, 'tools');
  fs.mkdirSync(dataDir, { recursive: true });
  fs.mkdirSync(toolsDir, { recursive: true });
  const settings: Record<string, string> = {
    DATABASE_URL,
    DATABASE_SCHEMA: schema,
    REDIS_URL,
    REDIS_PREFIX: redisPrefix,
    LLM_BASE_URL: context.scriptedModelUrl,
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    DATA_DIR: dataDir,
    // An empty folder: only the builtin tools, whatever ./tools holds on this machine.
    TOOLS_DIR: toolsDir,
    // One bench user does the work of many users: its per-user limits would measure the limiter
    // (which still runs, and costs what it costs), not the service's capacity.
    RATE_LIMIT_PER_MINUTE: '100000000',
    MAX_ACTIVE_TURNS_PER_USER: '100000',
    // The idle-websocket case holds 10,000 websockets of that one user's key.
    WS_MAX_CONNECTIONS_PER_KEY: '100000',
    ...options.env,
    ...context.stackEnv,
  };
  const services: ServiceRole[] = [];
  let unregister = () => undefined as unknown;
  const stopAll = async () => {
    unregister();
    await Promise.all(services.map((service) => service.process.stop()));
    const redis = connectRedis();
    try {
      await dropRedisKeys(redis, `${redisPrefix}:`);
    } finally {
      redis.disconnect();
    }
    await dropSchemas(schema);
  };
  const start = async (role: ServiceRole['role'], name: string, ready: 'banner' | 'health') => {
    const port = await freePort();
    const child = await startChild({
      name: `${slug}-${name}`,
      entry: `workers/${role}.ts`,
      env: { ...settings, PORT: String(port) },
      logDir: context.logDir,
      ...(context.profileDir ? { profileDir: context.profileDir } : {}),
      // all-in-one prints its dev key in a banner (whatever LOG_LEVEL); the others stay silent at warn.
      ready: ready === 'banner' ? { stdout: /Dev API key[^:]*:\s*(\S+)/ } : { healthUrl: `http://127.0.0.1:${port}/healthz` },
    });
    services.push({ role, process: child });
    return { port, child };
  };

  unregister = context.registerCleanup(stopAll);
  const metered = () => [
    ...services.map((service) => ({ name: service.process.name.replace(`${slug}-`, ''), pid: service.process.pid })),
    { name: 'scripted model', pid: context.scriptedModelPid },
  ];

  try {
    if (options.topology === 'all-in-one') {
      const { port, child } = await start('all-in-one', 'all-in-one', 'banner');
      const url = `http://127.0.0.1:${port}`;
      return { url, urls: [url], apiKey: child.match![1]!, redisPrefix, schema, services, settings, meteredProcesses: metered, stop: stopAll };
    }
    const apis = options.apis ?? 1;
    const urls: string[] = [];
    for (let index = 1; index <= apis; index++) urls.push(`http://127.0.0.1:${(await start('api', apis === 1 ? 'api' : `api-${index}`, 'health')).port}`);
    const apiKey = await createUser(settings);
    const workers = options.workers ?? 2;
    for (let index = 1; index <= workers; index++) await start('worker', `worker-${index}`, 'health');
    return { url: urls[0]!, urls, apiKey, redisPrefix, schema, services, settings, meteredProcesses: metered, stop: stopAll };
  } catch (error) {
    await stopAll().catch(() => undefined);
    throw error;
  }
}

/** `npm run cli -- users create bench` against the stack's database; returns the key. */
async function createUser(settings: Record<string, string>): Promise<string> {
  const { stdout } = await execFileAsync(process.execPath, ['--import', 'tsx', 'workers/cli.ts', 'users', 'create', 'bench'], {
    cwd: REPO_ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...settings },
    timeout: 30_000,
  });
  const created = JSON.parse(stdout) as { apiKey?: string };
  if (!created.apiKey) throw new Error(`the cli printed no apiKey: ${stdout}`);
  return created.apiKey;
}
