import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Redis } from 'ioredis';
import { reservePorts } from './ports';

/**
 * A private `redis-server` for fault tests, on a port of its own with AOF on, so a test can
 * restart it (keeping its data), empty it, or stop it without touching the shared Redis. The
 * port stays reserved while it is down, until `close`.
 */
export interface PrivateRedis {
  url: string;
  port: number;
  /** Stops it (SIGTERM: the AOF is flushed) and starts it again on the same port and data. */
  restart(): Promise<void>;
  /**
   * SIGKILLs it: no shutdown, nothing flushed then (`appendfsync always` has every acknowledged
   * write on disk already); `start` brings it back on the same port from its AOF.
   */
  crash(): Promise<void>;
  /** Stops it and starts it again empty: a Redis that lost its data. */
  restartEmpty(): Promise<void>;
  stop(): Promise<void>;
  start(): Promise<void>;
  close(): Promise<void>;
}

export async function startPrivateRedis(extraArgs: string[] = []): Promise<PrivateRedis> {
  const reservation = await reservePorts(1);
  const [port] = reservation.ports as [number];
  const dir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-redis-'));
  let child: ChildProcess | undefined;
  const url = `redis://127.0.0.1:${port}`;

  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes', '--appendfsync', 'always', '--save', '', ...extraArgs], {
      stdio: 'ignore',
    });
    await waitForPing(url);
  };
  const stop = async (signal: NodeJS.Signals = 'SIGTERM') => {
    const running = child;
    child = undefined;
    if (!running || running.exitCode !== null) return;
    await new Promise<void>((resolve) => {
      running.once('exit', () => resolve());
      running.kill(signal);
    });
  };

  try {
    await start();
  } catch (error) {
    await stop();
    await rm(dir, { recursive: true, force: true });
    reservation.release();
    throw error;
  }
  return {
    url,
    port,
    start,
    stop: () => stop(),
    async restart() {
      await stop();
      await start();
    },
    crash: () => stop('SIGKILL'),
    async restartEmpty() {
      await stop();
      await rm(dir, { recursive: true, force: true });
      await mkdir(dir, { recursive: true });
      await start();
    },
    async close() {
      await stop();
      await rm(dir, { recursive: true, force: true });
      reservation.release();
    },
  };
}

async function waitForPing(url: string, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined);
    try {
      await probe.connect();
      if ((await probe.ping()) === 'PONG') return;
    } catch {
      if (Date.now() > deadline) throw new Error(`redis-server on ${url} did not start`);
    } finally {
      probe.disconnect();
    }
    // Polling a starting server is the one wait with no event to wait for.
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
