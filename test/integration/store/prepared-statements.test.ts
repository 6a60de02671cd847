import os from 'node:os';
import { Client } from 'pg';
import { BackendUnavailableError } from '../../../src/errors/backend-unavailable';
import type { Db } from '../../../src/store/db';
import { openDb } from '../../../src/store/open-db';
import { uniqueSuffix } from '../../support/ids';
import { dropSchema, TEST_POSTGRES_URL } from '../../support/services';

/** Statements with parameters are prepared once per connection, and survive a migration that changes their table. */
describe('prepared statements on PostgreSQL', () => {
  const schema = `t_${uniqueSuffix()}`;
  let admin: Client;
  const opened: Db[] = [];
  const open = async (preparedStatements?: boolean) => {
    // One connection, so that what one query prepared is there for the next.
    const db = await openDb({ databaseUrl: TEST_POSTGRES_URL, schema, dataDir: os.tmpdir(), poolSize: 1, ...(preparedStatements === undefined ? {} : { preparedStatements }) });
    opened.push(db);
    return db;
  };
  const prepared = async (db: Db) => (await db.query<{ statement: string }>('SELECT statement FROM pg_prepared_statements')).rows.map((row) => row.statement);

  beforeAll(async () => {
    admin = new Client({ connectionString: TEST_POSTGRES_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA "${schema}"; CREATE TABLE "${schema}".things (id int PRIMARY KEY, name text); INSERT INTO "${schema}".things VALUES (1, 'one')`);
  });
  afterAll(async () => {
    for (const db of opened) await db.close();
    await admin.end();
    await dropSchema(schema);
  });

  it('prepares a statement with parameters on its first use and reuses it, inside transactions too', async () => {
    const db = await open();
    const select = 'SELECT * FROM things WHERE id = $1';
    expect((await db.query(select, [1])).rows).toEqual([{ id: 1, name: 'one' }]);
    expect((await db.transaction((tx) => tx.query(select, [1]))).rows).toEqual([{ id: 1, name: 'one' }]);
    expect((await prepared(db)).filter((statement) => statement === select)).toHaveLength(1);
  });

  it('runs a statement again, prepared afresh, when a migration changed its table; a transaction fails as in an outage', async () => {
    const db = await open();
    const select = 'SELECT * FROM things WHERE id = $1';
    await db.query(select, [1]);
    await admin.query(`ALTER TABLE "${schema}".things ADD COLUMN size int`);
    expect((await db.query(select, [1])).rows).toEqual([{ id: 1, name: 'one', size: null }]);

    await admin.query(`ALTER TABLE "${schema}".things ADD COLUMN colour text`);
    await expect(db.transaction((tx) => tx.query(select, [1]))).rejects.toBeInstanceOf(BackendUnavailableError);
    expect((await db.transaction((tx) => tx.query(select, [1]))).rows).toEqual([{ id: 1, name: 'one', size: null, colour: null }]);
  });

  it('prepares nothing when turned off', async () => {
    const db = await open(false);
    await db.query('SELECT name FROM things WHERE id = $1', [1]);
    expect(await prepared(db)).toEqual([]);
  });
});
