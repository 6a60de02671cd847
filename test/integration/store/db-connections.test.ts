import { poll } from '../../support/poll';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Db } from '../../../src/store/db';
import { openDb } from '../../../src/store/open-db';
import { uniqueSuffix } from '../../support/ids';
import { dropSchema, TEST_POSTGRES_URL } from '../../support/services';
import { copyPgliteTemplate } from '../../support/template-database';

/** What the metrics read of a database: its connections and the callers waiting, and each query's time. */
describe.each(['postgres', 'pglite'] as const)('the connection figures of %s', (kind) => {
  const schema = `t_${uniqueSuffix()}`;
  const times: number[] = [];
  let db: Db;
  let dataDir: string;

  beforeAll(async () => {
    // On PGlite a copy of the run's migrated folder: a new one would spend seconds in initdb.
    dataDir = kind === 'pglite' ? (await copyPgliteTemplate()).dataDir : await mkdtemp(path.join(os.tmpdir(), 'switchyard-db-figures-'));
    db = await openDb({
      databaseUrl: kind === 'postgres' ? TEST_POSTGRES_URL : undefined,
      schema,
      dataDir,
      poolSize: 1,
      onQueryTime: (seconds) => times.push(seconds),
    });
  });
  afterAll(async () => {
    await db.close();
    if (kind === 'postgres') await dropSchema(schema);
    await rm(dataDir, { recursive: true, force: true });
  });

  it('counts the busy connection and the caller waiting for it, and times every query', async () => {
    await db.query('SELECT 1');
    expect(db.connections()).toMatchObject({ max: 1, busy: 0, waiting: 0 });
    expect(db.connections().idle).toBeLessThanOrEqual(1);

    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let inside!: () => void;
    const entered = new Promise<void>((resolve) => (inside = resolve));
    const transaction = db.transaction(async (tx) => {
      await tx.query('SELECT 2');
      inside();
      await held;
    });
    await entered;
    const waiting = db.query('SELECT 3');
    await waitUntil(() => db.connections().waiting === 1);
    expect(db.connections()).toMatchObject({ busy: 1, idle: 0, waiting: 1 });

    release();
    await Promise.all([transaction, waiting]);
    expect(db.connections()).toMatchObject({ busy: 0, idle: 1, waiting: 0 });
    // SELECT 1, 2 and 3 (and, for PostgreSQL, BEGIN and COMMIT), each timed.
    expect(times.length).toBeGreaterThanOrEqual(3);
    expect(times.every((seconds) => seconds >= 0 && seconds < 10)).toBe(true);
  });
});

function waitUntil(condition: () => boolean): Promise<void> {
  return poll('condition not met within 5 s', condition, 5000, 5);
}
