import type { Client } from 'pg';
import type { Config } from '../../src/config/config';
import { connectDirect } from './services';

/**
 * Runs `fn` while PostgreSQL refuses every row `userId` inserts into `table` of a stack's
 * database (a trigger that raises, as a constraint or a full disk would): what the write was to
 * be part of must be rolled back with it. `fn` gets a connection to the schema to look with.
 */
export async function withInsertsRefused(
  config: Pick<Config, 'DATABASE_URL' | 'DATABASE_SCHEMA'>,
  table: string,
  userId: string,
  fn: (db: Client) => Promise<void>,
): Promise<void> {
  const db = await connectDirect(config.DATABASE_SCHEMA, config.DATABASE_URL);
  const name = `refuse_${table}`;
  try {
    await db.query(`
      CREATE FUNCTION ${name}() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN RAISE EXCEPTION 'refused by the test'; END $$;
      CREATE TRIGGER ${name} BEFORE INSERT ON ${table} FOR EACH ROW
        WHEN (NEW.user_id = '${userId}') EXECUTE FUNCTION ${name}();
    `);
    await fn(db);
  } finally {
    await db.query(`DROP TRIGGER IF EXISTS ${name} ON ${table}; DROP FUNCTION IF EXISTS ${name}()`);
    await db.end();
  }
}
