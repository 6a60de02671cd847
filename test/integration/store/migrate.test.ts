import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Db } from '../../../src/store/db';
import { defaultMigrationsDir, migrate, MigrationChangedError, readMigrations } from '../../../src/store/migrate';
import { openDb } from '../../../src/store/open-db';
import { uniqueSuffix } from '../../support/ids';
import { runToExit } from '../../support/processes';
import { dropSchema, TEST_POSTGRES_URL } from '../../support/services';

/** Migrations move forward only: each applied file's checksum is kept, and a changed one stops the start. */
describe('migrations', () => {
  const schemas: string[] = [];
  const dirs: string[] = [];
  const open = async (): Promise<{ db: Db; schema: string }> => {
    const schema = `t_${uniqueSuffix()}`;
    schemas.push(schema);
    return { db: await openDb({ databaseUrl: TEST_POSTGRES_URL, schema, dataDir: os.tmpdir() }), schema };
  };
  /** A copy of the project's migrations a test may edit. */
  const copyOfMigrations = async (): Promise<string> => {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-migrations-'));
    dirs.push(dir);
    await cp(defaultMigrationsDir(), dir, { recursive: true });
    return dir;
  };
  afterAll(async () => {
    for (const schema of schemas) await dropSchema(schema);
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('records the checksum of every migration it applies, and applies none twice', async () => {
    const { db } = await open();
    try {
      const all = readMigrations(defaultMigrationsDir());
      expect(await migrate(db)).toEqual(all.map((migration) => migration.id));
      const { rows } = await db.query<{ id: number; checksum: string }>('SELECT id, checksum FROM switchyard_migrations ORDER BY id');
      expect(rows).toEqual(all.map((migration) => ({ id: migration.id, checksum: migration.checksum })));
      expect(await migrate(db)).toEqual([]);
    } finally {
      await db.close();
    }
  });

  it('refuses a migration whose file changed after it was applied, naming the file', async () => {
    const dir = await copyOfMigrations();
    const { db } = await open();
    try {
      await migrate(db, dir);
      const first = path.join(dir, '0001_init.sql');
      await writeFile(first, `${await readFile(first, 'utf8')}\n-- an edit\n`);
      await expect(migrate(db, dir)).rejects.toThrow(MigrationChangedError);
      await expect(migrate(db, dir)).rejects.toThrow(`${first} changed after it was applied`);
    } finally {
      await db.close();
    }
  });

  it('a database migrated before checksums, with the edited 0001 (running_job), takes the checksums and starts', async () => {
    const { db } = await open();
    try {
      // What such a database holds: the table without its checksum column, 0001 and 0002 applied.
      const [init, toolCalls] = readMigrations(defaultMigrationsDir());
      await db.transaction(async (tx) => {
        await tx.exec(`CREATE TABLE switchyard_migrations (id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
          INSERT INTO switchyard_migrations (id, name) VALUES (1, 'init'), (2, 'tool_calls')`);
        await tx.exec(init!.sql);
        await tx.exec('ALTER TABLE turns ADD COLUMN running_job text');
        await tx.exec(toolCalls!.sql);
      });
      expect(await migrate(db)).toEqual(
        readMigrations(defaultMigrationsDir())
          .filter((migration) => migration.id > 2)
          .map((migration) => migration.id),
      );
      const { rows } = await db.query<{ checksum: string | null }>('SELECT checksum FROM switchyard_migrations WHERE id IN (1, 2)');
      expect(rows.every((row) => row.checksum !== null)).toBe(true);
      await db.query(`SELECT running_job FROM turns LIMIT 1`);
    } finally {
      await db.close();
    }
  });

  it("0014 marks the conversations batch items ran in, earlier runs too, and only those of the user's own batches", async () => {
    // The database as it was before 0014: later migrations build on what 0014 adds.
    const before = await copyOfMigrations();
    const fromFourteen = readMigrations(before).filter((migration) => migration.id >= 14);
    for (const migration of fromFourteen) await rm(path.join(before, migration.file));
    const { db } = await open();
    try {
      await migrate(db, before);
      await db.transaction((tx) =>
        tx.exec(`INSERT INTO users (id, name) VALUES ('u1', 'one'), ('u2', 'two');
        INSERT INTO batches (id, user_id, concurrency, priority, total, request_hash) VALUES ('batch_a', 'u1', 1, 0, 1, 'h');
        INSERT INTO conversations (id, user_id, external_id) VALUES
          ('run1', 'u1', 'batch:batch_a:0:1'), ('run2', 'u1', 'batch:batch_a:0:2'), ('chat', 'u1', 'a-chat'), ('rest', 'u1', NULL),
          ('lookalike', 'u1', 'batch:batch_missing:0:1'), ('foreign', 'u2', 'batch:batch_a:0:1')`),
      );
      expect(await migrate(db)).toEqual(fromFourteen.map((migration) => migration.id));
      const { rows } = await db.query<{ id: string; batch_id: string | null }>('SELECT id, batch_id FROM conversations ORDER BY ordinal');
      expect(rows).toEqual([
        { id: 'run1', batch_id: 'batch_a' },
        { id: 'run2', batch_id: 'batch_a' },
        { id: 'chat', batch_id: null },
        { id: 'rest', batch_id: null },
        { id: 'lookalike', batch_id: null },
        { id: 'foreign', batch_id: null },
      ]);
    } finally {
      await db.close();
    }
  });

  it('a process starting on a changed migration exits with that one line', async () => {
    const { db, schema } = await open();
    try {
      await migrate(db);
      // The running code reads the project's migrations: change the recorded checksum instead of the file.
      await db.query(`UPDATE switchyard_migrations SET checksum = 'edited' WHERE id = 2`);
    } finally {
      await db.close();
    }
    const result = await runToExit('workers/worker.ts', { DATABASE_URL: TEST_POSTGRES_URL, DATABASE_SCHEMA: schema, LOG_LEVEL: 'silent' });
    expect(result.code).toBe(1);
    expect(result.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^switchyard: .*0002_tool_calls\.sql changed after it was applied to this database; migrations only move forward/),
    ]);
  });
});
