import { poll } from './poll';
/** Anything that runs a query: a pool, a client of its own, a transaction. */
interface Queryable {
  query<R>(text: string, values?: unknown[]): Promise<{ rows: R[] }>;
}

/**
 * Resolves once a statement whose text contains `statement` waits for a lock in PostgreSQL
 * (nothing announces that). Ask through a connection outside the lock holder's transaction: a
 * transaction sees one snapshot of pg_stat_activity.
 */
export async function waitUntilStatementWaitsForLock(db: Queryable, statement: string, timeoutMs = 10_000): Promise<void> {
  await poll(
    `no statement like "${statement}" waited for a lock within ${timeoutMs} ms`,
    async () => {
      const { rows } = await db.query<{ waiting: number }>(`SELECT count(*)::int AS waiting FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND query LIKE '%' || $1 || '%'`, [
        statement,
      ]);
      return rows[0]!.waiting > 0;
    },
    timeoutMs,
  );
}
