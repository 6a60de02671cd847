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

/** Told of a channel's notifications (NOTIFY, sent at the notifying transaction's commit). */
export interface ChannelListener {
  notified(): void;
  /** Listening started, or started again after `lost`: notifications sent before were missed. */
  listening(): void;
  /** Listening stopped (its connection dropped) or could not start: tried again until it works. Told once per outage. */
  lost(error: Error): void;
}

export interface Listening {
  close(): Promise<void>;
}

export interface Db extends Queryable {
  /** Runs `fn` in one transaction: committed if it resolves, rolled back if it throws. */
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
  readonly kind: 'postgres' | 'pglite';
  /** Listens on `channel` until closed (PostgreSQL: on a connection of its own, opened again when it drops). */
  listen(channel: string, listener: ChannelListener): Listening;
  /** Read for metrics: cheap, no I/O. */
  connections(): ConnectionPoolFigures;
  close(): Promise<void>;
}
