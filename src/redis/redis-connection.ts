import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import net from 'node:net';
import fs from 'node:fs';
import path from 'node:path';
import { Cluster, Redis, type ClusterOptions, type RedisOptions } from 'ioredis';
import { describeConnectionFailure, redactUrl, unusableStoreLine, type ConnectionFailure } from '../errors/connection-failure';
import { StartupError } from '../errors/startup-error';

export const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

export class RedisUnavailableError extends StartupError {
  override readonly code = 'redis_unavailable';
}

/** A connection to one Redis or to a Redis Cluster: both take the same commands. */
export type RedisClient = Redis | Cluster;

export interface ClusterNode {
  host: string;
  port: number;
}

/** Where a process's Redis is: one server (REDIS_URL) or some nodes of a cluster (REDIS_CLUSTER_NODES). */
export type RedisTarget = { kind: 'single'; url: string } | { kind: 'cluster'; nodes: ClusterNode[] };

/**
 * `command`: fails fast (the API's requests); `blocking`: waits an outage out (event log
 * appends and reads); `queue`: a BullMQ Worker's or QueueEvents' connection, which waits too
 * on one Redis (see {@link clusterOptions} for a cluster); `subscriber`: pub/sub.
 */
export type RedisRole = 'command' | 'blocking' | 'queue' | 'subscriber';

/** The Redis the configuration names; undefined when it names none (the embedded default). */
export function configuredRedisTarget(config: { REDIS_URL?: string | undefined; REDIS_CLUSTER_NODES?: ClusterNode[] | undefined }): RedisTarget | undefined {
  if (config.REDIS_CLUSTER_NODES) return { kind: 'cluster', nodes: config.REDIS_CLUSTER_NODES };
  return config.REDIS_URL ? { kind: 'single', url: config.REDIS_URL } : undefined;
}

/** The target's address for messages, without credentials. */
export function describeRedisTarget(target: RedisTarget): string {
  return target.kind === 'single' ? redactUrl(target.url) : `the Redis Cluster at ${target.nodes.map((node) => `${node.host}:${node.port}`).join(',')}`;
}

const reconnectDelay = (times: number) => Math.min(times * 200, 2000);

/**
 * Connections for the roles a process needs. Workers and subscribers wait out an
 * outage (BullMQ requires `maxRetriesPerRequest: null`); the API's command connection fails
 * fast so a request answers 503 instead of hanging: at once while Redis refuses connections,
 * after `commandTimeoutMs` while it accepts them and answers nothing.
 */
export function redisOptions(role: RedisRole, commandTimeoutMs = 3000): RedisOptions {
  const base: RedisOptions = { retryStrategy: reconnectDelay };
  if (role === 'command') return { ...base, maxRetriesPerRequest: 1, enableOfflineQueue: false, connectTimeout: 2000, commandTimeout: commandTimeoutMs };
  return { ...base, maxRetriesPerRequest: null };
}

/**
 * The same roles on a cluster. A command whose slot's master is down (killed, a failover
 * under way, the cluster refusing every slot until it is back) is sent again every
 * `retryDelayOnFailover` / `retryDelayOnClusterDown` with a fresh slot map, up to
 * `maxRedirections` times (16): a fail-fast connection gives up after about 1.6 s, so the
 * API still answers 503 within its command timeout; a BullMQ one after about 3 s, and
 * BullMQ's own loop takes over from there (with retries without end a BullMQ worker was seen
 * to stop fetching jobs after a cluster-wide outage). The event log's and the subscriber's
 * retry without end, as `maxRetriesPerRequest: null` does on one Redis: appends keep their
 * order, reads and a sharded SSUBSCRIBE return once the slot's master serves again. The
 * subscriber keeps a connection per master for sharded pub/sub (the conversation channels).
 */
export function clusterOptions(role: RedisRole, commandTimeoutMs = 3000): ClusterOptions {
  const base: ClusterOptions = { clusterRetryStrategy: reconnectDelay, retryDelayOnFailover: 100, retryDelayOnClusterDown: 100, retryDelayOnTryAgain: 100 };
  if (role === 'command') {
    return {
      ...base,
      enableOfflineQueue: false,
      redisOptions: { maxRetriesPerRequest: 1, connectTimeout: 2000, commandTimeout: commandTimeoutMs },
    };
  }
  const waiting: ClusterOptions = { ...base, retryDelayOnFailover: 200, retryDelayOnClusterDown: 200, redisOptions: { maxRetriesPerRequest: null } };
  if (role === 'queue') return waiting;
  const endless: ClusterOptions = { ...waiting, maxRedirections: Number.POSITIVE_INFINITY };
  return role === 'subscriber' ? { ...endless, shardedSubscribers: true } : endless;
}

/** Every Redis connection of a process comes from here, so the roles mean the same on one Redis and on a cluster. */
export function connectRedis(target: RedisTarget, role: RedisRole, commandTimeoutMs?: number): RedisClient {
  if (target.kind === 'cluster') return new Cluster(target.nodes, clusterOptions(role, commandTimeoutMs));
  return new Redis(target.url, redisOptions(role, commandTimeoutMs));
}

export function isCluster(redis: RedisClient): redis is Cluster {
  return redis instanceof Cluster;
}

/** A fail-fast connection refuses commands until it is ready, so wait for that at start. */
export function whenReady(redis: RedisClient, timeoutMs = 5000): Promise<void> {
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
export async function probeRedis(url: string, connectTimeoutMs = 2000): Promise<ConnectionFailure | null> {
  const probe = new Redis(url, probeOptions(connectTimeoutMs));
  return withProbe(probe, async () => {
    await probe.ping();
    return null;
  });
}

/**
 * Asks the given nodes of a cluster, one after the other, for `CLUSTER INFO`: null once one
 * of them says the cluster serves every slot (`cluster_state:ok`), else why not.
 */
export async function probeCluster(nodes: ClusterNode[], connectTimeoutMs = 2000): Promise<ConnectionFailure | null> {
  let problem: ConnectionFailure = { reason: 'no node given', refused: true };
  for (const node of nodes) {
    const probe = new Redis({ ...node, ...probeOptions(connectTimeoutMs) });
    const answer = await withProbe(probe, async () => {
      const info = await probe.cluster('INFO');
      return /^cluster_state:ok\b/m.test(info)
        ? null
        : { reason: `${node.host}:${node.port} reports ${/^cluster_state:\S+/m.exec(info)?.[0] ?? 'no cluster_state'}`, refused: false };
    });
    if (answer === null) return null;
    problem = /cluster support disabled/i.test(answer.reason) ? { reason: `${node.host}:${node.port} is not a cluster node (set REDIS_URL for one Redis)`, refused: true } : answer;
  }
  return problem;
}

/**
 * One attempt, no ready check, and a timeout on the command: a server that accepts the
 * connection and never answers would otherwise hold the start forever (connectTimeout ends at
 * the TCP connect).
 */
function probeOptions(timeoutMs: number): RedisOptions {
  return { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: timeoutMs, enableReadyCheck: false, commandTimeout: timeoutMs };
}

async function withProbe(probe: Redis, ask: () => Promise<ConnectionFailure | null>): Promise<ConnectionFailure | null> {
  // connect() rejects with "Connection is closed."; the socket's own error says why.
  let cause: unknown;
  probe.on('error', (error) => (cause ??= error));
  try {
    await probe.connect();
    return await ask();
  } catch (error) {
    return describeConnectionFailure(cause ?? error);
  } finally {
    probe.disconnect();
  }
}

/** A start that cannot reach Redis ends with this one line, not a log line per reconnect. */
export async function assertRedisAnswers(target: RedisTarget): Promise<void> {
  if (target.kind === 'cluster') {
    const problem = await probeCluster(target.nodes);
    if (problem) throw new RedisUnavailableError(unusableStoreLine(describeRedisTarget(target), problem, 'Start it, or set REDIS_CLUSTER_NODES to nodes of a cluster that runs'));
    return;
  }
  const problem = await probeRedis(target.url);
  if (problem) throw new RedisUnavailableError(unusableStoreLine(`Redis at ${redactUrl(target.url)}`, problem, 'Start it, or set REDIS_URL to a Redis that runs'));
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
 * keeps the queue. It runs in a process group of its own: a Ctrl-C in the terminal reaches
 * Switchyard alone, which stops it once its own connections are closed (were both stopped at
 * once, the closing queues would wait on a Redis that is gone). The caller holds DATA_DIR's
 * lock, so a redis-server still running on it is one a killed start left behind: stopped first.
 */
export async function ensureRedis(dataDir: string): Promise<{ url: string; child?: ChildProcess }> {
  if ((await probeRedis(DEFAULT_REDIS_URL, 1000)) === null) return { url: DEFAULT_REDIS_URL };
  if (spawnSync('redis-server', ['--version']).error) {
    throw new RedisUnavailableError('no Redis at 127.0.0.1:6379 and no redis-server on the PATH: install Redis (apt-get install redis-server) or set REDIS_URL');
  }
  const dir = path.join(dataDir, 'redis');
  fs.mkdirSync(dir, { recursive: true });
  const pidFile = path.join(dir, 'redis.pid');
  await stopLeftover(pidFile);
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--pidfile', pidFile, '--appendonly', 'yes', '--save', '', '--maxmemory-policy', 'noeviction'],
    { stdio: 'ignore', detached: true },
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

/** Stops the redis-server a pid file names, if it still runs (where /proc tells what runs). */
async function stopLeftover(pidFile: string): Promise<void> {
  const pid = Number.parseInt(fs.existsSync(pidFile) ? fs.readFileSync(pidFile, 'utf8') : '', 10);
  if (!Number.isInteger(pid) || pid <= 0) return;
  const command = fs.existsSync(`/proc/${pid}/cmdline`) ? fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8') : '';
  if (!command.includes('redis-server')) return;
  process.kill(pid, 'SIGTERM');
  for (let tries = 0; tries < 100 && fs.existsSync(`/proc/${pid}`); tries++) await new Promise((resolve) => setTimeout(resolve, 50));
}

/**
 * BullMQ loses jobs under any eviction policy; refuse to run on such a Redis (on a cluster:
 * on any of its masters). Read from INFO, not CONFIG GET, which managed services
 * (ElastiCache, Memorystore) disable.
 */
export async function assertNoEviction(redis: RedisClient): Promise<void> {
  const servers = isCluster(redis) ? redis.nodes('master') : [redis];
  for (const server of servers) {
    const info = await server.info('memory');
    const policy = /^maxmemory_policy:(\S+)/m.exec(info)?.[1];
    if (policy && policy !== 'noeviction') {
      const where = isCluster(redis) ? ` on ${server.options.host}:${server.options.port}` : '';
      throw new RedisUnavailableError(
        `Redis maxmemory-policy is "${policy}"${where}: set it to "noeviction" (redis-cli config set maxmemory-policy noeviction), or queued turns can be evicted`,
      );
    }
  }
}
