import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { DatabaseLockedError, openDb } from '../../../src/store/open-db';

describe('the embedded database', () => {
  it('opens once when two opens of one DATA_DIR race: the other is refused with the one "in use" line', async () => {
    const dataDir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-open-race-'));
    try {
      const options = { databaseUrl: undefined, schema: 'switchyard', dataDir };
      const outcomes = await Promise.allSettled([openDb(options), openDb(options)]);
      const opened = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      const refused = outcomes.filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
      expect(opened).toHaveLength(1);
      expect(refused).toHaveLength(1);
      const error = refused[0]!.reason;
      expect(error).toBeInstanceOf(DatabaseLockedError);
      expect(error.message.split('\n')).toEqual([`the embedded database in ${path.join(dataDir, 'db')} is in use by another process: stop it, or set DATABASE_URL to share a PostgreSQL server`]);

      // The one that opened works, and once it is closed the folder opens again.
      const db = (opened[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof openDb>>>).value;
      expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      await db.close();
      const again = await openDb(options);
      await again.close();
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }, 120_000); // PGlite's first open and migrations block for seconds, far longer on a loaded machine
});
