import path from 'node:path';
import { DatabaseLockedError, openDb } from '../../../src/store/open-db';
import { copyPgliteTemplate } from '../../support/template-database';

describe('the embedded database', () => {
  it('opens once when two opens of one DATA_DIR race: the other is refused with the one "in use" line', async () => {
    // A copy of the run's migrated folder: the race is for the folder's lock, not initdb's.
    const copy = await copyPgliteTemplate();
    const dataDir = copy.dataDir;
    try {
      const options = { databaseUrl: undefined, schema: copy.schema, dataDir };
      const outcomes = await Promise.allSettled([openDb(options), openDb(options)]);
      const opened = outcomes.filter((outcome) => outcome.status === 'fulfilled');
      const refused = outcomes.filter((outcome): outcome is PromiseRejectedResult => outcome.status === 'rejected');
      expect(opened).toHaveLength(1);
      expect(refused).toHaveLength(1);
      const error = refused[0]!.reason;
      expect(error).toBeInstanceOf(DatabaseLockedError);
      expect(error.message.split('\n')).toEqual([
        `the embedded database in ${path.join(dataDir, 'db')} is in use by another process: stop it, or set DATABASE_URL to share a PostgreSQL server`,
      ]);

      // The one that opened works, and once it is closed the folder opens again.
      const db = (opened[0] as PromiseFulfilledResult<Awaited<ReturnType<typeof openDb>>>).value;
      expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
      await db.close();
      const again = await openDb(options);
      await again.close();
    } finally {
      await copy.drop();
    }
  }, 60_000); // opening PGlite blocks for a second or more, far longer on a loaded machine
});
