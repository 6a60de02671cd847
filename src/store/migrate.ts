import fs from 'node:fs';
import path from 'node:path';
import type { Db } from './db';

export interface Migration {
  id: number;
  name: string;
  sql: string;
}

/** `migrations/` at the project root, found from here whether running from src or dist. */
export function defaultMigrationsDir(from: string = __dirname): string {
  for (let dir = from; dir !== path.dirname(dir); dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'migrations');
    if (fs.existsSync(path.join(dir, 'package.json')) && fs.existsSync(candidate)) return candidate;
  }
  throw new Error(`no migrations folder above ${from}`);
}

/** `0001_init.sql` → {id: 1, name: 'init'}; files not named so are not migrations. */
export function readMigrations(dir: string): Migration[] {
  return fs
    .readdirSync(dir)
    .map((file) => ({ file, match: /^(\d+)_([\w-]+)\.sql$/.exec(file) }))
    .filter((entry): entry is { file: string; match: RegExpExecArray } => entry.match !== null)
    .map(({ file, match }) => ({ id: Number(match[1]), name: match[2]!, sql: fs.readFileSync(path.join(dir, file), 'utf8') }))
    .sort((a, b) => a.id - b.id);
}

/**
 * Applies the migrations not yet recorded, each in its own transaction that takes an advisory
 * lock and records itself before running, so two processes starting at once apply each
 * migration exactly once (the second waits for the lock, then finds it recorded).
 */
export async function migrate(db: Db, dir: string = defaultMigrationsDir()): Promise<number[]> {
  const applied: number[] = [];
  for (const migration of readMigrations(dir)) {
    const ran = await db.transaction(async (tx) => {
      // Must come first, before even the table check, so that concurrent starts serialise here.
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext('switchyard:migrate:' || current_schema()))`);
      await tx.exec(`CREATE TABLE IF NOT EXISTS switchyard_migrations (
        id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`);
      const { rows } = await tx.query('SELECT 1 FROM switchyard_migrations WHERE id = $1', [migration.id]);
      if (rows.length > 0) return false;
      await tx.query('INSERT INTO switchyard_migrations (id, name) VALUES ($1, $2)', [migration.id, migration.name]);
      await tx.exec(migration.sql);
      return true;
    });
    if (ran) applied.push(migration.id);
  }
  return applied;
}
