import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import fs from 'node:fs';
import path from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
import { connectionFailureReason, redactUrl } from '../errors/connection-failure';
import { StartupError } from '../errors/startup-error';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export class RedisUnavailableError extends StartupError {
  override readonly code = 'redis_unavailable';
}

/**
 * Connections for the three roles a process needs. Workers and subscribers wait out an
 * outage (BullMQ requires `maxRetriesPerRequest: null`); the API's command connection fails
 * fast so a request answers 503 instead of hanging: at once while Redis refuses connections,
 * after `commandTimeoutMs` while it accepts them and answers nothing.
 */
export function redisOptions(role: 'command' | 'blocking' | 'subscriber', commandTimeoutMs = 3000): RedisOptions {
  const base: RedisOptions = { retryStrategy: (times) => Math.min(times * 200, 2000) };
  if (role === 'command') return { ...base, maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2000, commandTimeout: commandTimeoutMs };
  return { ...base, maxRetriesPerRequest: null };
}

export function connectRedis(url: string, role: 'command' | 'blocking' | 'subscriber', commandTimeoutMs?: number): Redis {
  return new Redis(url, redisOptions(role, commandTimeoutMs));
}

/** A fail-fast connection refuses commands until it is ready, so wait for that at start. */
export function whenReady(redis: Redis, timeoutMs = 5000): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      redis.off('ready', onReady);
      reject(new RedisUnavailableError(`Redis did not answer within ${timeoutMs} ms`));
    }, timeoutMs);
    const onReady = () => {
      clearTimeout(timer);
      resolve();
    };
    redis.once('ready', onReady);
  });
}

/** One PING on a connection of its own: null when Redis answers, else why not. */
export async function probeRedis(url: string, connectTimeoutMs = 2000): Promise<string | null> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: connectTimeoutMs });
  // connect() rejects with "Connection is closed."; the socket's own error says why.
  let cause: unknown;
  probe.on('error', (error) => (cause ??= error));
  try {
    await probe.connect();
    await probe.ping();
    return null;
  } catch (error) {
    return connectionFailureReason(cause ?? error);
  } finally {
    probe.disconnect();
  }
}

/** A start that cannot reach Redis ends with this one line, not a log line per reconnect. */
export async function assertRedisAnswers(url: string): Promise<void> {
  const problem = await probeRedis(url);
  if (problem) throw new RedisUnavailableError(`Redis at ${redactUrl(url)} did not answer: ${problem}. Start it, or set REDIS_URL to a Redis that runs`);
}

/** A TCP port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * The embedded default: with REDIS_URL unset and nothing on 127.0.0.1:6379, start the
 * `redis-server` on the PATH as a child, on a free port, with AOF in DATA_DIR so a restart
 * keeps the queue.
 */
export async function ensureRedis(
  configuredUrl: string | undefined,
  dataDir: string,
): Promise<{ url: string; child?: ChildProcess }> {
  if (configuredUrl) return { url: configuredUrl };
  if ((await probeRedis(DEFAULT_REDIS_URL, 1000)) === null) return { url: DEFAULT_REDIS_URL };
  if (spawnSync('redis-server', ['--version']).error) {
    throw new RedisUnavailableError(
      'no Redis at 127.0.0.1:6379 and no redis-server on the PATH: install Redis (apt-get install redis-server) or set REDIS_URL',
    );
  }
  const dir = path.join(dataDir, 'redis');
  fs.mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--save', '', '--maxmemory-policy', 'noeviction'],
    { stdio: 'ignore' },
  );
  // It answers within milliseconds once it has loaded its AOF; nothing announces that.
  for (let tries = 0; tries < 100; tries++) {
    if ((await probeRedis(url, 500)) === null) return { url, child };
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill();
  throw new RedisUnavailableError(`started redis-server on port ${port} but it did not answer: see ${dir}`);
}

/**
 * BullMQ loses jobs under any eviction policy; refuse to run on such a Redis. Read from INFO,
 * not CONFIG GET, which managed services (ElastiCache, Memorystore) disable.
 */
export async function assertNoEviction(redis: Redis): Promise<void> {
  const info = await redis.info('memory');
  const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
  if (policy && policy !== 'noeviction') {
    throw new RedisUnavailableError(
      `Redis maxmemory-policy is "${policy}": set it to "noeviction" (redis-cli config set maxmemory-policy noeviction), or queued turns can be evicted`,
    );
  }
}
