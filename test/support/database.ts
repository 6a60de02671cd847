import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Db } from '../../src/store/db';
import { migrate } from '../../src/store/migrate';
import { openDb } from '../../src/store/open-db';
import { uniqueSuffix } from './ids';
import { dropSchema, TEST_POSTGRES_URL } from './services';

/** A migrated database of its own: a fresh schema on the PostgreSQL server, or a fresh PGlite folder. */
export async function createTestDatabase(kind: 'postgres' | 'pglite'): Promise<{ db: Db; schema: string; drop(): Promise<void> }> {
  const schema = `t_${uniqueSuffix()}`;
  if (kind === 'postgres') {
    const db = await openDb({ databaseUrl: TEST_POSTGRES_URL, schema, dataDir: os.tmpdir() });
    await migrate(db);
    return {
      db,
      schema,
      async drop() {
        await db.close();
        await dropSchema(schema);
      },
    };
  }
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-pglite-'));
  const db = await openDb({ databaseUrl: undefined, schema, dataDir });
  await migrate(db);
  return {
    db,
    schema,
    async drop() {
      await db.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}
