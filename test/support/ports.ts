import { closeSync, openSync, rmSync, writeSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** A port nothing listens on (taken from the OS, then freed). */
export async function closedPort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/**
 * Where reserved ports come from: below Linux's ephemeral range (32768–60999 by default), so that
 * no listen(0) or outgoing connection of any process can be given one while a server is down.
 */
const RESERVABLE = { first: 20_000, last: 29_999 };
const EPHEMERAL_FIRST = 32_768;
const lockDir = os.tmpdir();

export interface ReservedPorts {
  ports: number[];
  /** Gives the ports back to other reservations. */
  release(): void;
}

/**
 * `count` ports for servers a test starts, stops and starts again on the same port (a
 * `redis-server` with its data): each free on 127.0.0.1 now, together with its `companions`
 * (a Redis Cluster node's bus port is its port + 10000; those land at 30000 and up, where no
 * other reservation looks), all below the ephemeral range, and reserved across Jest's worker
 * processes (a lock file per port, created exclusively) until `release`.
 */
export async function reservePorts(count: number, options: { companions?: (port: number) => number[] } = {}): Promise<ReservedPorts> {
  const companions = options.companions ?? (() => []);
  const candidates: number[] = [];
  for (let port = RESERVABLE.first; port <= RESERVABLE.last; port++) {
    if ([port, ...companions(port)].every((each) => each < EPHEMERAL_FIRST)) candidates.push(port);
  }
  // From a random place: reservations running at once mostly try different ports.
  const start = Math.floor(Math.random() * candidates.length);
  const reserved: string[] = [];
  const ports: number[] = [];
  const release = () => {
    for (const lock of reserved.splice(0)) rmSync(lock, { force: true });
  };
  for (let i = 0; i < candidates.length && ports.length < count; i++) {
    const port = candidates[(start + i) % candidates.length]!;
    const lock = path.join(lockDir, `switchyard-test-port-${port}`);
    if (!tryLock(lock)) continue;
    reserved.push(lock);
    if ((await Promise.all([port, ...companions(port)].map(canListen))).every(Boolean)) {
      ports.push(port);
    } else {
      reserved.pop();
      rmSync(lock, { force: true });
    }
  }
  if (ports.length < count) {
    release();
    throw new Error(`no ${count} free ports to reserve in ${RESERVABLE.first}–${RESERVABLE.last}`);
  }
  return { ports, release };
}

function tryLock(lock: string): boolean {
  let fd: number;
  try {
    fd = openSync(lock, 'wx');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Taken, or left behind by a process killed before its release: taking one over could race
    // another taker, and skipping it costs one more try.
    return false;
  }
  // Whose it is, for a person who finds one left behind.
  writeSync(fd, String(process.pid));
  closeSync(fd);
  return true;
}

function canListen(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}
