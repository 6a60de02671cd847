import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import type { PGlite } from '@electric-sql/pglite';
import lockfile from 'proper-lockfile';
import { Pool, type PoolClient } from 'pg';
import { coerceError } from '../errors/switchyard-error';
import { BackendUnavailableError } from '../errors/backend-unavailable';
import { describeConnectionFailure, redactUrl, unusableStoreLine } from '../errors/connection-failure';
import { StartupError } from '../errors/startup-error';
import type { Db, Transaction } from './db';
import { embeddedDatabaseDir } from './embedded-database';
import { StatementNames } from './statement-names';
import { listenOnPostgres } from './postgres-channel-listening';

export interface OpenDbOptions {
  /** A PostgreSQL server; unset → the embedded PGlite in `DATA_DIR/db`. */
  databaseUrl: string | undefined;
  /**
   * The PostgreSQL connection that LISTENs (PostgreSQL only; PGlite listens on itself). Default
   * `databaseUrl`; a direct one where that goes through a pooler in transaction mode.
   */
  listenUrl?: string;
  /** The schema holding Switchyard's tables (created when missing). */
  schema: string;
  dataDir: string;
  /** Connections of the pool (PostgreSQL only). Default 20. */
  poolSize?: number;
  /** A query unanswered this long fails and its connection is dropped (PostgreSQL only). Default 10000. */
  queryTimeoutMs?: number;
  /** Idle pool connections can fail (the server restarted); they are dropped and reported here. */
  onError?: (error: Error) => void;
  /** Told each query's time in seconds, answered or failed (for metrics). */
  onQueryTime?: (seconds: number) => void;
  /**
   * Named (prepared) statements, planned once per connection (PostgreSQL only). Default true;
   * off for a PgBouncer in transaction mode older than 1.21, which cannot carry them.
   */
  preparedStatements?: boolean;
}

export class DatabaseLockedError extends StartupError {
  override readonly code = 'database_locked';
}

/** Opens PostgreSQL or PGlite behind the one {@link Db} interface the repositories see. */
export async function openDb(options: OpenDbOptions): Promise<Db> {
  return options.databaseUrl ? openPostgres(options.databaseUrl, options) : openPglite(options);
}

async function openPostgres(connectionString: string, options: OpenDbOptions): Promise<Db> {
  await ensureSchema(connectionString, options.schema).catch((error: unknown) => {
    throw new StartupError(
      unusableStoreLine(
        `PostgreSQL at ${redactUrl(connectionString)}`,
        describeConnectionFailure(error),
        'Start it, or set DATABASE_URL to a server that runs (or unset it for the embedded database)',
      ),
    );
  });
  const max = options.poolSize ?? 20;
  const pool = new Pool({
    connectionString,
    max,
    // Fail fast while the server is down, so the API answers 503 instead of hanging; and,
    // for a server that hangs, give up on a query rather than wait for TCP to notice.
    connectionTimeoutMillis: 3000,
    query_timeout: options.queryTimeoutMs ?? 10_000,
    keepAlive: true,
    options: `-c search_path=${options.schema}`,
  });
  pool.on('error', (error) => options.onError?.(error));
  const timed = timer(options.onQueryTime);
  const statements = options.preparedStatements === false ? null : new StatementNames();
  /**
   * A statement prepared before a migration changed its table fails once; outside a
   * transaction it runs again, prepared afresh. Inside one the transaction is lost, and fails
   * as after an outage: the API answers 503 with Retry-After, a worker's job is retried.
   */
  const send = async (client: Pool | PoolClient, sql: string, params: unknown[] | undefined, retryStale: boolean): Promise<unknown> => {
    if (!statements) return client.query(sql, params);
    try {
      return await client.query(statements.config(sql, params));
    } catch (error) {
      if (!statements.renewAfter(error)) throw error;
      if (retryStale) return client.query(statements.config(sql, params));
      throw new BackendUnavailableError('postgres', error);
    }
  };
  return {
    kind: 'postgres',
    query: (sql, params) => timed(() => send(pool, sql, params, true).catch(rethrowAsStoreError) as never),
    connections: () => ({ max, busy: pool.totalCount - pool.idleCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    listen: (channel, listener) => listenOnPostgres(options.listenUrl ?? connectionString, channel, listener),
    async transaction(fn) {
      const client = await pool.connect().catch(rethrowAsStoreError);
      let broken: Error | undefined;
      // A checked-out client has no listener of the pool's: without this, a connection that
      // drops mid-transaction raises an unhandled 'error' (the failed query reports it too).
      const onConnectionError = (error: Error) => {
        broken = error;
      };
      client.on('error', onConnectionError);
      try {
        await client.query('BEGIN').catch(rethrowAsStoreError);
        const result = await fn(clientTransaction(client, timed, send));
        await client.query('COMMIT').catch(rethrowAsStoreError);
        return result;
      } catch (error) {
        // A connection that cannot even roll back (it broke, or a query timed out and its
        // answer may still come) must not go back to the pool for the next transaction.
        await client.query('ROLLBACK').catch((rollbackError: unknown) => {
          broken = coerceError(rollbackError);
        });
        throw error;
      } finally {
        client.off('error', onConnectionError);
        client.release(broken);
      }
    },
    close: () => pool.end(),
  };
}

/** Runs a query, telling `onQueryTime` how long it took (a no-op without one). */
type QueryTimer = <T>(query: () => Promise<T>) => Promise<T>;

function timer(onQueryTime: OpenDbOptions['onQueryTime']): QueryTimer {
  if (!onQueryTime) return (query) => query();
  return async (query) => {
    const startedAt = performance.now();
    try {
      return await query();
    } finally {
      onQueryTime((performance.now() - startedAt) / 1000);
    }
  };
}

function clientTransaction(
  client: PoolClient,
  timed: QueryTimer,
  send: (client: PoolClient, sql: string, params: unknown[] | undefined, retryStale: boolean) => Promise<unknown>,
): Transaction {
  return {
    query: (sql, params) => timed(() => send(client, sql, params, false).catch(rethrowAsStoreError) as never),
    async exec(sql) {
      await client.query(sql).catch(rethrowAsStoreError);
    },
  };
}

/**
 * pg reports what the server said as a DatabaseError (its SQLSTATE tells the rest), and its
 * connection's trouble (it ended, timed out, never opened) as plain `Error`s, most without a
 * code: those are named here, where their origin is known. An error of any other class (a
 * TypeError or RangeError of a value we passed) is the statement's, and fails it.
 */
function rethrowAsStoreError(error: unknown): never {
  if (error instanceof Error && Object.getPrototypeOf(error) === Error.prototype) throw new BackendUnavailableError('postgres', error);
  throw error;
}

/** Two processes starting at once must not both try to create the schema. */
async function ensureSchema(connectionString: string, schema: string): Promise<void> {
  const pool = new Pool({ connectionString, max: 1, connectionTimeoutMillis: 5000 });
  try {
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`switchyard:schema:${schema}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
      await client.query('COMMIT');
    } finally {
      client.release();
    }
  } finally {
    await pool.end();
  }
}

/**
 * PGlite is one process's database: a second process opening the same folder would corrupt
 * it, so the folder is locked (proper-lockfile: an atomic mkdir, kept fresh while we run), and
 * a live holder is refused with a clear line. A lock left by a process that died goes stale
 * after LOCK_STALE_MS; a start meanwhile waits that out.
 */
async function openPglite(options: OpenDbOptions): Promise<Db> {
  const dir = embeddedDatabaseDir(options.dataDir);
  fs.mkdirSync(dir, { recursive: true });
  const releaseLock = await lockFolder(dir, options.onError);
  let pglite: PGlite;
  try {
    // Loaded only here: half a megabyte of script that every process on PostgreSQL (and every
    // test file's stack) would otherwise compile for nothing.
    const { PGlite } = require('@electric-sql/pglite') as typeof import('@electric-sql/pglite');
    pglite = await PGlite.create(dir);
    await pglite.exec(`CREATE SCHEMA IF NOT EXISTS "${options.schema}"; SET search_path TO "${options.schema}";`);
  } catch (error) {
    await releaseLock();
    throw error;
  }
  const timed = timer(options.onQueryTime);
  // PGlite is one connection that serves its callers in turn: those beyond the first wait.
  let callers = 0;
  const counted = async <T>(call: () => Promise<T>): Promise<T> => {
    callers++;
    try {
      return await call();
    } finally {
      callers--;
    }
  };
  return {
    kind: 'pglite',
    query: (sql, params) => counted(() => timed(() => pglite.query(sql, params) as never)),
    connections: () => ({ max: 1, busy: Math.min(callers, 1), idle: callers === 0 ? 1 : 0, waiting: Math.max(0, callers - 1) }),
    // One session, the one that notifies too: nothing to lose or open again.
    listen(channel, listener) {
      const unlisten = pglite
        .listen(channel, () => listener.notified())
        .then(
          (stop) => {
            listener.listening();
            return stop;
          },
          (error: unknown) => {
            listener.lost(coerceError(error));
            return undefined;
          },
        );
      return {
        async close() {
          await (
            await unlisten
          )?.();
        },
      };
    },
    // PGlite runs one transaction at a time; queries on `pglite` itself wait for it to end, so
    // code inside `fn` must use `tx` only (it would deadlock otherwise).
    transaction: (fn) =>
      counted(() =>
        pglite.transaction((tx) =>
          fn({
            query: (sql, params) => timed(() => tx.query(sql, params) as never),
            async exec(sql) {
              await tx.exec(sql);
            },
          }),
        ),
      ),
    async close() {
      await pglite.close();
      await releaseLock();
    },
  };
}

/**
 * Opening PGlite blocks the event loop for seconds (about 9 s on a busy two-core machine), so
 * its holder cannot refresh the lock meanwhile: a lock is stale only after much longer than
 * that. The holder refreshes it every LOCK_UPDATE_MS while its event loop runs.
 */
const LOCK_STALE_MS = 30_000;
const LOCK_UPDATE_MS = 1_000;

/**
 * A lock refreshed lately has a live holder: refused at once. One not refreshed lately belongs
 * to a process that is opening the database (it refreshes soon, then is refused) or that died
 * (its lock goes stale and is taken): waited out.
 */
async function lockFolder(dir: string, onError: OpenDbOptions['onError']): Promise<() => Promise<void>> {
  const lockfilePath = `${dir}.pglite-lock`;
  for (;;) {
    try {
      return await lockfile.lock(dir, { lockfilePath, stale: LOCK_STALE_MS, update: LOCK_UPDATE_MS, retries: 0, onCompromised: (error) => onError?.(error) });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
      const refreshedAt = await fs.promises.stat(lockfilePath).then(
        (stat) => stat.mtimeMs,
        () => null,
      );
      if (refreshedAt !== null && Date.now() - refreshedAt < 3 * LOCK_UPDATE_MS) {
        throw new DatabaseLockedError(`the embedded database in ${dir} is in use by another process: stop it, or set DATABASE_URL to share a PostgreSQL server`);
      }
      await delay(LOCK_UPDATE_MS);
    }
  }
}
