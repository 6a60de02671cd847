import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import lockfile from 'proper-lockfile';
import { DatabaseError, Pool, type PoolClient } from 'pg';
import { coerceError } from '../errors/app-error';
import { BackendUnavailableError } from '../errors/backend-unavailable';
import { connectionFailureReason, redactUrl } from '../errors/connection-failure';
import { StartupError } from '../errors/startup-error';
import type { Db, Transaction } from './db';

export interface OpenDbOptions {
  /** A PostgreSQL server; unset → the embedded PGlite in `DATA_DIR/db`. */
  databaseUrl: string | undefined;
  /** The schema holding Switchyard's tables (created when missing). */
  schema: string;
  dataDir: string;
  /** Connections of the pool (PostgreSQL only). Default 20. */
  poolSize?: number;
  /** A query unanswered this long fails and its connection is dropped (PostgreSQL only). Default 10000. */
  queryTimeoutMs?: number;
  /** Idle pool connections can fail (the server restarted); they are dropped and reported here. */
  onError?: (error: Error) => void;
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
      `PostgreSQL at ${redactUrl(connectionString)} did not answer: ${connectionFailureReason(error)}. Start it, or set DATABASE_URL to a server that runs (or unset it for the embedded database)`,
    );
  });
  const pool = new Pool({
    connectionString,
    max: options.poolSize ?? 20,
    // Fail fast while the server is down, so the API answers 503 instead of hanging; and,
    // for a server that hangs, give up on a query rather than wait for TCP to notice.
    connectionTimeoutMillis: 3000,
    query_timeout: options.queryTimeoutMs ?? 10_000,
    keepAlive: true,
    options: `-c search_path=${options.schema}`,
  });
  pool.on('error', (error) => options.onError?.(error));
  return {
    kind: 'postgres',
    query: async (sql, params) => pool.query(sql, params).catch(rethrowAsStoreError) as never,
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
        const result = await fn(clientTransaction(client));
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

function clientTransaction(client: PoolClient): Transaction {
  return {
    query: async (sql, params) => client.query(sql, params).catch(rethrowAsStoreError) as never,
    async exec(sql) {
      await client.query(sql).catch(rethrowAsStoreError);
    },
  };
}

/**
 * pg reports what the server said as a DatabaseError (its SQLSTATE tells the rest); anything
 * else it throws is its connection's trouble (it ended, timed out, never opened), said in plain
 * errors without a code, so it is named here, where its origin is known. A TypeError is ours.
 */
function rethrowAsStoreError(error: unknown): never {
  if (error instanceof DatabaseError || error instanceof TypeError) throw error;
  throw new BackendUnavailableError('postgres', error);
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
 * within seconds; a start meanwhile waits that out.
 */
async function openPglite(options: OpenDbOptions): Promise<Db> {
  const dir = path.join(options.dataDir, 'db');
  fs.mkdirSync(dir, { recursive: true });
  const releaseLock = await lockFolder(dir, options.onError);
  let pglite: PGlite;
  try {
    pglite = await PGlite.create(dir);
    await pglite.exec(`CREATE SCHEMA IF NOT EXISTS "${options.schema}"; SET search_path TO "${options.schema}";`);
  } catch (error) {
    await releaseLock();
    throw error;
  }
  return {
    kind: 'pglite',
    query: async (sql, params) => pglite.query(sql, params) as never,
    // PGlite runs one transaction at a time; queries on `pglite` itself wait for it to end, so
    // code inside `fn` must use `tx` only (it would deadlock otherwise).
    transaction: (fn) =>
      pglite.transaction((tx) =>
        fn({
          query: async (sql, params) => tx.query(sql, params) as never,
          async exec(sql) {
            await tx.exec(sql);
          },
        }),
      ),
    async close() {
      await pglite.close();
      await releaseLock();
    },
  };
}

/** proper-lockfile's least: the holder refreshes the lock every second. */
const LOCK_STALE_MS = 2000;

async function lockFolder(dir: string, onError: OpenDbOptions['onError']): Promise<() => Promise<void>> {
  try {
    return await lockfile.lock(dir, {
      lockfilePath: `${dir}.pglite-lock`,
      stale: LOCK_STALE_MS,
      // A lock of a dead process is stale after LOCK_STALE_MS: try for a little longer than that.
      retries: { retries: 3, factor: 1, minTimeout: 1000, maxTimeout: 1000 },
      onCompromised: (error) => onError?.(error),
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
    throw new DatabaseLockedError(
      `the embedded database in ${dir} is in use by another process: stop it, or set DATABASE_URL to share a PostgreSQL server`,
    );
  }
}
