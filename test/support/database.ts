import os from 'node:os';
import type { Db } from '../../src/store/db';
import { migrate } from '../../src/store/migrate';
import { openDb } from '../../src/store/open-db';
import { uniqueSuffix } from './ids';
import { dropSchema, TEST_POSTGRES_URL } from './services';
import { copyPgliteTemplate, copyTemplateDatabase } from './template-database';

/**
 * A migrated database of its own: `postgres`, a copy of the run's template on the PostgreSQL
 * server; `postgres-schema`, a freshly migrated schema in the server's shared database (for tests
 * of schemas side by side on one database); `pglite`, a folder of its own holding a copy of the
 * run's migrated PGlite.
 */
export async function createTestDatabase(kind: 'postgres' | 'postgres-schema' | 'pglite'): Promise<{ db: Db; schema: string; drop(): Promise<void> }> {
  if (kind === 'postgres') {
    const copy = await copyTemplateDatabase();
    const db = await openDb({ databaseUrl: copy.url, schema: copy.schema, dataDir: os.tmpdir() });
    return {
      db,
      schema: copy.schema,
      async drop() {
        await db.close();
        await copy.drop();
      },
    };
  }
  if (kind === 'postgres-schema') {
    const schema = `t_${uniqueSuffix()}`;
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
  const copy = await copyPgliteTemplate();
  const db = await openDb({ databaseUrl: undefined, schema: copy.schema, dataDir: copy.dataDir });
  return {
    db,
    schema: copy.schema,
    async drop() {
      await db.close();
      await copy.drop();
    },
  };
}
