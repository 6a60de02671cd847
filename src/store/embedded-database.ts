import fs from 'node:fs';
import path from 'node:path';

/** Where the embedded PGlite lives (open-db.ts opens it there). */
export const embeddedDatabaseDir = (dataDir: string) => path.join(dataDir, 'db');

/**
 * Whether DATA_DIR holds an embedded database already: PostgreSQL writes PG_VERSION when it
 * makes one. The CLI asks before opening, so that a DATA_DIR other than the server's is named
 * rather than silently given a new, empty database.
 */
export function embeddedDatabaseExists(dataDir: string): boolean {
  return fs.existsSync(path.join(embeddedDatabaseDir(dataDir), 'PG_VERSION'));
}
