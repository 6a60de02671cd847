import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { DatabaseError, Pool, type PoolClient } from 'pg';
import { coerceError } from '../errors/app-error';
import { BackendUnavailableError } from '../errors/backend-unavailable';
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
  await ensureSchema(connectionString, options.schema);
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
 * it, so the folder is locked with a pid file, and a live holder is refused with a clear line.
 */
async function openPglite(options: OpenDbOptions): Promise<Db> {
  const dir = path.join(options.dataDir, 'db');
  fs.mkdirSync(dir, { recursive: true });
  const releaseLock = lockFolder(path.join(options.dataDir, 'db.lock'));
  let pglite: PGlite;
  try {
    pglite = await PGlite.create(dir);
    await pglite.exec(`CREATE SCHEMA IF NOT EXISTS "${options.schema}"; SET search_path TO "${options.schema}";`);
  } catch (error) {
    releaseLock();
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
      releaseLock();
    },
  };
}

function lockFolder(lockFile: string): () => void {
  const holder = readPid(lockFile);
  if (holder !== null && holder !== process.pid && isAlive(holder)) {
    throw new DatabaseLockedError(
      `the embedded database in ${path.dirname(lockFile)} is in use by process ${holder}: stop it, or set DATABASE_URL to share a PostgreSQL server`,
    );
  }
  fs.writeFileSync(lockFile, String(process.pid));
  return () => {
    if (readPid(lockFile) === process.pid) fs.rmSync(lockFile, { force: true });
  };
}

function readPid(file: string): number | null {
  try {
    const pid = Number(fs.readFileSync(file, 'utf8').trim());
    return Number.isSafeInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
