import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { StartupError } from '../errors/startup-error';
import type { Db, Transaction } from './db';

export interface Migration {
  id: number;
  name: string;
  file: string;
  sql: string;
  /** SHA-256 of the file, recorded when applied: an applied migration's file never changes. */
  checksum: string;
}

export class MigrationChangedError extends StartupError {
  override readonly code = 'migration_changed';
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
    .map(({ file, match }) => {
      const sql = fs.readFileSync(path.join(dir, file), 'utf8');
      return { id: Number(match[1]), name: match[2]!, file, sql, checksum: createHash('sha256').update(sql).digest('hex') };
    })
    .sort((a, b) => a.id - b.id);
}

/**
 * Applies the migrations not yet recorded, each in its own transaction that takes an advisory
 * lock and records itself before running, so two processes starting at once apply each
 * migration exactly once (the second waits for the lock, then finds it recorded). Migrations
 * only move forward: one whose file changed after it was applied stops the start, naming it.
 */
export async function migrate(db: Db, dir: string = defaultMigrationsDir()): Promise<number[]> {
  const applied: number[] = [];
  for (const migration of readMigrations(dir)) {
    const ran = await db.transaction(async (tx) => {
      // Must come first, before even the table check, so that concurrent starts serialise here.
      await tx.query(`SELECT pg_advisory_xact_lock(hashtext('switchyard:migrate:' || current_schema()))`);
      await ensureMigrationsTable(tx);
      const { rows } = await tx.query<{ checksum: string | null }>('SELECT checksum FROM switchyard_migrations WHERE id = $1', [migration.id]);
      const recorded = rows[0];
      if (recorded) {
        // Recorded before checksums were: the file as it is now is taken as the applied one.
        if (recorded.checksum === null) await tx.query('UPDATE switchyard_migrations SET checksum = $2 WHERE id = $1', [migration.id, migration.checksum]);
        else if (recorded.checksum !== migration.checksum) throw changed(dir, migration);
        return false;
      }
      await tx.query('INSERT INTO switchyard_migrations (id, name, checksum) VALUES ($1, $2, $3)', [migration.id, migration.name, migration.checksum]);
      await tx.exec(migration.sql);
      return true;
    });
    if (ran) applied.push(migration.id);
  }
  return applied;
}

async function ensureMigrationsTable(tx: Transaction): Promise<void> {
  await tx.exec(`CREATE TABLE IF NOT EXISTS switchyard_migrations (
    id integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now());
    ALTER TABLE switchyard_migrations ADD COLUMN IF NOT EXISTS checksum text`);
}

function changed(dir: string, migration: Migration): MigrationChangedError {
  return new MigrationChangedError(
    `${path.join(dir, migration.file)} changed after it was applied to this database; migrations only move forward: restore the file and put the change in a new migration`,
  );
}
