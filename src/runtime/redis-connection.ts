import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';
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

async function answersPing(url: string): Promise<boolean> {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  probe.on('error', () => undefined);
  try {
    await probe.connect();
    return (await probe.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    probe.disconnect();
  }
}

/**
 * The embedded default: with REDIS_URL unset and nothing on 127.0.0.1:6379, start the
 * `redis-server` on the PATH as a child, with AOF so a restart keeps the queue.
 */
export async function ensureRedis(
  configuredUrl: string | undefined,
  dataDir: string,
): Promise<{ url: string; child?: ChildProcess }> {
  if (configuredUrl) return { url: configuredUrl };
  if (await answersPing(DEFAULT_REDIS_URL)) return { url: DEFAULT_REDIS_URL };
  if (spawnSync('redis-server', ['--version']).error) {
    throw new RedisUnavailableError(
      'no Redis at 127.0.0.1:6379 and no redis-server on the PATH: install Redis (apt-get install redis-server) or set REDIS_URL',
    );
  }
  const dir = path.join(dataDir, 'redis');
  fs.mkdirSync(dir, { recursive: true });
  const child = spawn(
    'redis-server',
    ['--port', '6379', '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--save', '', '--maxmemory-policy', 'noeviction'],
    { stdio: 'ignore' },
  );
  for (let tries = 0; tries < 50; tries++) {
    if (await answersPing(DEFAULT_REDIS_URL)) return { url: DEFAULT_REDIS_URL, child };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill();
  throw new RedisUnavailableError('started redis-server but it did not answer on 127.0.0.1:6379');
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
