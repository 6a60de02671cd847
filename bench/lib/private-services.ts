import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { freePort } from './free-port';

const execFileAsync = promisify(execFile);

/**
 * A Redis and a PostgreSQL of one benchmark's own, so that what they count (INFO commandstats,
 * pg_stat_statements, WAL bytes) is that benchmark's work alone, not the machine's other tenants'.
 */
export interface PrivateService {
  url: string;
  stop(): Promise<void>;
}

/** redis-server as the shared one runs (no persistence), on a free port. */
export async function startPrivateRedis(dir: string): Promise<PrivateService> {
  const port = await freePort();
  fs.mkdirSync(dir, { recursive: true });
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--save', '', '--appendonly', 'no', '--maxmemory-policy', 'noeviction'], {
    stdio: 'ignore',
  });
  const url = `redis://127.0.0.1:${port}`;
  await waitFor(async () => {
    const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    try {
      await redis.connect();
      return (await redis.ping()) === 'PONG';
    } finally {
      redis.disconnect();
    }
  }, 'redis-server');
  return { url, stop: () => stopChild(child) };
}

/**
 * A PostgreSQL cluster made with Debian's initdb in a directory of its own (run as the `postgres`
 * user when this process is root, which PostgreSQL refuses to run as: the directory is then one
 * that user can reach, not under the benchmark's private temp dir), trust auth on 127.0.0.1, with
 * pg_stat_statements loaded and its extension created in database `postgres`. Removed on stop.
 */
export async function startPrivatePostgres(): Promise<PrivateService> {
  const bin = postgresBinDir();
  const port = await freePort();
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'switchyard-bench-pg-'));
  fs.chmodSync(root, 0o755);
  const dir = path.join(root, 'data');
  fs.mkdirSync(dir);
  const asRoot = process.getuid?.() === 0;
  const asPostgres = (command: string, args: string[]) => (asRoot ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args]) as [string, string[]];
  if (asRoot) await execFileAsync('chown', ['postgres:postgres', dir]);
  await execFileAsync(...asPostgres(path.join(bin, 'initdb'), ['-D', dir, '--auth=trust', '-U', 'postgres', '--no-sync']));
  const [command, args] = asPostgres(path.join(bin, 'postgres'), [
    '-D',
    dir,
    '-p',
    String(port),
    '-c',
    'listen_addresses=127.0.0.1',
    '-c',
    `unix_socket_directories=${dir}`,
    '-c',
    'shared_preload_libraries=pg_stat_statements',
    '-c',
    'pg_stat_statements.track=all',
  ]);
  const child = spawn(command, args, { stdio: 'ignore' });
  const url = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  await waitFor(async () => {
    const client = new Client({ connectionString: url });
    try {
      await client.connect();
      await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
      return true;
    } catch {
      return false;
    } finally {
      await client.end().catch(() => undefined);
    }
  }, 'postgres');
  return {
    url,
    stop: async () => {
      await stopChild(child);
      fs.rmSync(root, { recursive: true, force: true });
    },
  };
}

/** The newest PostgreSQL of Debian's /usr/lib/postgresql/<major>/bin. */
function postgresBinDir(): string {
  const root = '/usr/lib/postgresql';
  const majors = fs.existsSync(root) ? fs.readdirSync(root).sort((a, b) => Number(b) - Number(a)) : [];
  if (majors.length === 0) throw new Error(`no PostgreSQL server binaries under ${root} (Debian's postgresql package)`);
  return path.join(root, majors[0]!, 'bin');
}

async function waitFor(check: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (Date.now() > deadline) throw new Error(`${what} did not answer within 30 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}
