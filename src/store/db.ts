import type { ConnectionPoolFigures } from '../metrics/metrics';

/**
 * The database seen by repositories: PostgreSQL through `pg`, or embedded PGlite. Both speak
 * the same SQL; repositories never know which one they have.
 */
export interface Queryable {
  query<Row = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<{ rows: Row[] }>;
}

/** A transaction's connection; `exec` runs several `;`-separated statements (migrations). */
export interface Transaction extends Queryable {
  exec(sql: string): Promise<void>;
}

export interface Db extends Queryable {
  /** Runs `fn` in one transaction: committed if it resolves, rolled back if it throws. */
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  readonly kind: 'postgres' | 'pglite';
  /** Read for metrics: cheap, no I/O. */
  connections(): ConnectionPoolFigures;
  close(): Promise<void>;
}
