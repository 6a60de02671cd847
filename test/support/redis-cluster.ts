import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { poll } from './poll';
import { reservePorts } from './ports';

/**
 * A private Redis Cluster for fault tests: three masters (no replicas) started from the
 * `redis-server` and `redis-cli` on the PATH, each on a port and in a directory of its own,
 * with AOF on, so that a test can SIGKILL the master serving a slot and start it again with
 * its data and its cluster identity (nodes.conf).
 */
export interface PrivateRedisCluster {
  ports: number[];
  /** `127.0.0.1:p1,127.0.0.1:p2,127.0.0.1:p3`, the form of REDIS_CLUSTER_NODES. */
  nodes: string;
  /** The port of the master serving `key`'s slot now. */
  masterOf(key: string): Promise<number>;
  /** SIGKILLs the node on `port` and resolves once it is gone. */
  kill(port: number): Promise<void>;
  /** Starts the node on `port` again, from its AOF and nodes.conf, and waits for it to answer. */
  start(port: number): Promise<void>;
  /** Resolves once every running node reports `cluster_state:<state>`. */
  waitForState(state: 'ok' | 'fail', timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

const MASTERS = 3;

export async function startRedisCluster(options: { nodeTimeoutMs?: number } = {}): Promise<PrivateRedisCluster> {
  const root = await mkdtemp(path.join(os.tmpdir(), 'switchyard-cluster-'));
  // The cluster bus of each node listens on its port + 10000.
  const reservation = await reservePorts(MASTERS, { companions: (port) => [port + 10_000] });
  const { ports } = reservation;
  const children = new Map<number, ChildProcess>();

  const start = async (port: number) => {
    const dir = path.join(root, String(port));
    await mkdir(dir, { recursive: true });
    // AOF with the default fsync once a second: Redis writes the AOF before it replies, so
    // a killed process (not a lost machine) loses no acknowledged write.
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--dir',
        dir,
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-node-timeout',
        String(options.nodeTimeoutMs ?? 2000),
        '--appendonly',
        'yes',
        '--save',
        '',
        '--maxmemory-policy',
        'noeviction',
      ],
      { stdio: 'ignore' },
    );
    child.once('error', () => undefined);
    children.set(port, child);
    await poll(`redis-server on ${port} did not start`, async () => (await ask(port, (redis) => redis.ping())) === 'PONG');
  };
  const kill = async (port: number) => {
    const child = children.get(port);
    children.delete(port);
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    await new Promise<void>((resolve) => {
      child.once('exit', () => resolve());
      child.kill('SIGKILL');
    });
  };
  const waitForState = (state: 'ok' | 'fail', timeoutMs = 30_000) =>
    poll(
      `the cluster did not reach cluster_state:${state}`,
      async () => {
        const states = await Promise.all([...children.keys()].map((port) => ask(port, (redis) => redis.cluster('INFO'))));
        return states.every((info) => typeof info === 'string' && info.includes(`cluster_state:${state}`));
      },
      timeoutMs,
    );

  try {
    await Promise.all(ports.map(start));
    const created = await run('redis-cli', ['--cluster', 'create', ...ports.map((port) => `127.0.0.1:${port}`), '--cluster-replicas', '0', '--cluster-yes']);
    if (created.code !== 0) throw new Error(`redis-cli --cluster create failed: ${created.output}`);
    await waitForState('ok');
  } catch (error) {
    await Promise.all(ports.map(kill));
    await rm(root, { recursive: true, force: true });
    reservation.release();
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw new Error('a Redis Cluster test needs redis-server and redis-cli on the PATH (apt-get install redis-server redis-tools)');
    throw error;
  }

  return {
    ports,
    nodes: ports.map((port) => `127.0.0.1:${port}`).join(','),
    async masterOf(key) {
      const port = [...children.keys()][0]!;
      const slot = await ask(port, (redis) => redis.cluster('KEYSLOT', key));
      const lines = await ask(port, (redis) => redis.cluster('NODES'));
      if (typeof slot !== 'number' || typeof lines !== 'string') throw new Error(`node ${port} did not answer CLUSTER KEYSLOT / NODES`);
      for (const line of lines.trim().split('\n')) {
        // <id> <ip:port@cport> <flags> <master> <ping> <pong> <epoch> <link> <slot ranges…>
        const [, address, flags, , , , , , ...ranges] = line.split(' ');
        if (!flags!.split(',').includes('master')) continue;
        const serves = ranges.some((range) => {
          const [from, to = from] = range.split('-').map(Number);
          return slot >= from! && slot <= to!;
        });
        if (serves) return Number(address!.split('@')[0]!.split(':')[1]);
      }
      throw new Error(`no master serves slot ${slot}`);
    },
    kill,
    start,
    waitForState,
    async close() {
      await Promise.all(ports.map(kill));
      await rm(root, { recursive: true, force: true });
      reservation.release();
    },
  };
}

/** One command on a connection of its own to a node; undefined when the node does not answer. */
async function ask<T>(port: number, command: (redis: Redis) => Promise<T>): Promise<T | undefined> {
  const redis = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    return await command(redis);
  } catch {
    return undefined;
  } finally {
    redis.disconnect();
  }
}

function run(command: string, args: string[]): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += String(chunk)));
    child.stderr.on('data', (chunk) => (output += String(chunk)));
    child.once('error', reject);
    child.once('exit', (code) => resolve({ code, output }));
  });
}
