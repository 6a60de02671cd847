import net from 'node:net';
import os from 'node:os';
import fs from 'node:fs';
import { ConnectionClosedError } from 'bullmq';
import { Cluster, Redis, ReplyError } from 'ioredis';
import { DatabaseError } from 'pg';
import { isBackendUnavailable } from '../../../src/errors/backend-unavailable';
import { readJobFailure, toJobFailure } from '../../../src/queue/job-failure';
import { redisOptions } from '../../../src/redis/redis-connection';
import { openDb } from '../../../src/store/open-db';
import { uniqueSuffix } from '../../support/ids';
import { closedPort } from '../../support/ports';
import { dropSchema, TEST_POSTGRES_URL, TEST_REDIS_URL } from '../../support/services';
import { startPostgresProxy } from '../../support/tcp-proxy';

/**
 * Each way Redis or PostgreSQL says "not now" is provoked from the real library, so that a new
 * wording or class in ioredis, pg or Node shows up here rather than as failed turns.
 */

/** A TCP server that accepts connections and never answers. */
async function silentServer(): Promise<{ port: number; close(): Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

async function rejection(promise: Promise<unknown>): Promise<Error> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

describe('isBackendUnavailable, by class, SQLSTATE and errno', () => {
  describe('Node sockets', () => {
    it('a refused connection (errno ECONNREFUSED, also inside an AggregateError or a cause)', async () => {
      const port = await closedPort();
      const refused = await rejection(new Promise((_, reject) => net.connect(port, '127.0.0.1').on('error', reject)));
      expect((refused as NodeJS.ErrnoException).code).toBe('ECONNREFUSED');
      expect(isBackendUnavailable(refused)).toBe(true);
      expect(isBackendUnavailable(new AggregateError([refused], 'all addresses failed'))).toBe(true);
      expect(isBackendUnavailable(new Error('enqueue failed', { cause: refused }))).toBe(true);
    });
  });

  describe('PostgreSQL through our adapter', () => {
    const schema = `t_${uniqueSuffix()}`;
    afterAll(() => dropSchema(schema));

    it('a server that refuses connections', async () => {
      const proxy = await startPostgresProxy(TEST_POSTGRES_URL);
      const db = await openDb({ databaseUrl: proxy.urlFor(TEST_POSTGRES_URL), schema, dataDir: os.tmpdir() });
      try {
        proxy.cut();
        expect(isBackendUnavailable(await rejection(db.query('SELECT 1')))).toBe(true);
      } finally {
        await db.close();
        await proxy.close();
      }
    });

    it('a query the server does not answer in time (pg: a plain error, named by the adapter)', async () => {
      const db = await openDb({ databaseUrl: TEST_POSTGRES_URL, schema, dataDir: os.tmpdir(), queryTimeoutMs: 100 });
      try {
        const error = await rejection(db.query('SELECT pg_sleep(1)'));
        expect(isBackendUnavailable(error)).toBe(true);
      } finally {
        await db.close();
      }
    });

    it('a connection the server ends (SQLSTATE 57P01), in and out of a transaction', async () => {
      const db = await openDb({ databaseUrl: TEST_POSTGRES_URL, schema, dataDir: os.tmpdir() });
      try {
        const error = await rejection(
          db.transaction(async (tx) => {
            await tx.query('SELECT pg_terminate_backend(pg_backend_pid())');
          }),
        );
        expect(isBackendUnavailable(error)).toBe(true);
      } finally {
        await db.close();
      }
    });

    it('but not what the statement got wrong (syntax, a constraint)', async () => {
      const db = await openDb({ databaseUrl: TEST_POSTGRES_URL, schema, dataDir: os.tmpdir() });
      try {
        expect(isBackendUnavailable(await rejection(db.query('SELEC 1')))).toBe(false);
        expect(isBackendUnavailable(await rejection(db.query(`SELECT 'x'::int`)))).toBe(false);
        expect(
          isBackendUnavailable(
            await rejection(
              db.query('SELECT $1::int', [
                {
                  toPostgres: () => {
                    throw new TypeError('ours');
                  },
                },
              ]),
            ),
          ),
        ).toBe(false);
        expect(
          isBackendUnavailable(
            await rejection(
              db.query('SELECT $1::int', [
                {
                  toPostgres: () => {
                    throw new RangeError('ours too');
                  },
                },
              ]),
            ),
          ),
        ).toBe(false);
      } finally {
        await db.close();
      }
    });
  });

  describe('Redis through ioredis', () => {
    it('a fail-fast connection to a server that is down (no offline queue)', async () => {
      const redis = new Redis(`redis://127.0.0.1:${await closedPort()}`, { ...redisOptions('command'), retryStrategy: () => null, lazyConnect: true });
      redis.on('error', () => undefined);
      try {
        expect(isBackendUnavailable(await rejection(redis.get('k')))).toBe(true);
      } finally {
        redis.disconnect();
      }
    });

    it('a server that accepts the connection and answers nothing (command timeout)', async () => {
      const silent = await silentServer();
      const redis = new Redis(`redis://127.0.0.1:${silent.port}`, { commandTimeout: 200, enableReadyCheck: false, maxRetriesPerRequest: 0 });
      redis.on('error', () => undefined);
      try {
        expect(isBackendUnavailable(await rejection(redis.get('k')))).toBe(true);
      } finally {
        redis.disconnect();
        await silent.close();
      }
    });

    it('a waiting connection that gave up reconnecting (MaxRetriesPerRequestError)', async () => {
      const redis = new Redis(`redis://127.0.0.1:${await closedPort()}`, { maxRetriesPerRequest: 1, retryStrategy: () => 10, connectTimeout: 200 });
      redis.on('error', () => undefined);
      try {
        expect(isBackendUnavailable(await rejection(redis.get('k')))).toBe(true);
      } finally {
        redis.disconnect();
      }
    });

    it('a connection closed under a command', async () => {
      const redis = new Redis(TEST_REDIS_URL);
      const pending = rejection(redis.blpop(`unused-${uniqueSuffix()}`, 5));
      redis.disconnect();
      expect(isBackendUnavailable(await pending)).toBe(true);
    });

    it('a server still loading its data (reply LOADING), but not a command error', async () => {
      const real = new Redis(TEST_REDIS_URL);
      try {
        expect(isBackendUnavailable(new ReplyError('LOADING Redis is loading the dataset in memory'))).toBe(true);
        expect(isBackendUnavailable(await rejection(real.call('NO-SUCH-COMMAND')))).toBe(false);
      } finally {
        real.disconnect();
      }
    });
  });

  describe('Redis Cluster through ioredis', () => {
    it('a cluster connection that is not ready (no offline queue), and one that reaches none of its nodes', async () => {
      const port = await closedPort();
      const failFast = new Cluster([{ host: '127.0.0.1', port }], { enableOfflineQueue: false, clusterRetryStrategy: () => null, lazyConnect: true });
      failFast.on('error', () => undefined);
      const waiting = new Cluster([{ host: '127.0.0.1', port }], { clusterRetryStrategy: () => null });
      const emitted: Error[] = [];
      waiting.on('error', (error: Error) => emitted.push(error));
      try {
        const notReady = await rejection(failFast.get('k'));
        expect(notReady.message).toBe("Cluster isn't ready and enableOfflineQueue options is false");
        expect(isBackendUnavailable(notReady)).toBe(true);
        const noNode = await rejection(waiting.get('k'));
        expect(noNode.message).toBe('None of startup nodes is available');
        expect(isBackendUnavailable(noNode)).toBe(true);
        // What the connection emits meanwhile: ClusterAllFailedError, judged by its class.
        expect(emitted.length).toBeGreaterThan(0);
        expect(emitted.every((error) => isBackendUnavailable(error))).toBe(true);
      } finally {
        failFast.disconnect();
        waiting.disconnect();
      }
    });

    it('a command whose slot has no master for too long: the wording ioredis gives up with is still its own', () => {
      const source = fs.readFileSync(require.resolve('ioredis/built/cluster/index.js'), 'utf8');
      expect(source).toContain('Too many Cluster redirections.');
      expect(isBackendUnavailable(new Error('Too many Cluster redirections. Last error: Error: Connection is closed.'))).toBe(true);
    });

    it('replies of a cluster that is not serving a slot now (CLUSTERDOWN, MASTERDOWN, TRYAGAIN)', () => {
      for (const reply of ['CLUSTERDOWN The cluster is down', 'MASTERDOWN Link with MASTER is down', 'TRYAGAIN Multiple keys request during rehashing of slot']) {
        expect(isBackendUnavailable(new ReplyError(reply))).toBe(true);
      }
      expect(isBackendUnavailable(new ReplyError('CROSSSLOT Keys in request do not hash to the same slot'))).toBe(false);
    });
  });

  it('each SQLSTATE of a server not taking work, and none of a statement at fault', () => {
    const withCode = (code: string) => Object.assign(new DatabaseError('from the server', 0, 'error'), { code });
    for (const code of ['08000', '08003', '08006', '08001', '08004', '57P01', '57P02', '57P03', '53300']) {
      expect([code, isBackendUnavailable(withCode(code))]).toEqual([code, true]);
    }
    for (const code of ['42601', '23505', '40001', '40P01', '53100', '57014']) {
      expect([code, isBackendUnavailable(withCode(code))]).toEqual([code, false]);
    }
  });

  it('each socket errno of a server that is not there, and none other', () => {
    const withErrno = (code: string) => Object.assign(new Error(`connect ${code}`), { code });
    for (const code of ['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']) {
      expect([code, isBackendUnavailable(withErrno(code))]).toEqual([code, true]);
    }
    for (const code of ['ENOENT', 'EACCES', 'ERR_INVALID_ARG_TYPE']) expect([code, isBackendUnavailable(withErrno(code))]).toEqual([code, false]);
  });

  it("BullMQ's closed connection, by its class", () => {
    expect(isBackendUnavailable(new ConnectionClosedError())).toBe(true);
  });

  it('never a bug of ours, whatever its words', () => {
    expect(isBackendUnavailable(new TypeError("Cannot read properties of undefined (reading 'x')"))).toBe(false);
    expect(isBackendUnavailable(new Error('Connection terminated unexpectedly'))).toBe(false);
    expect(isBackendUnavailable('ECONNREFUSED')).toBe(false);
  });
});

describe('job failures carry their cause in a code of ours', () => {
  it('an outage, a bug and a malformed job read back as such; a reason we did not write is the stall limit', async () => {
    const port = await closedPort();
    const refused = await rejection(new Promise((_, reject) => net.connect(port, '127.0.0.1').on('error', reject)));
    expect(readJobFailure((toJobFailure(refused) as Error).message)).toBe('backend_unavailable');
    expect(readJobFailure((toJobFailure(new TypeError('oops')) as Error).message)).toBe('internal');
    expect(readJobFailure('job stalled more than allowable limit')).toBe('stalled');
    expect(readJobFailure(undefined)).toBe('stalled');
  });
});
