import { cp, mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { migrate } from '../../src/store/migrate';
import { openDb } from '../../src/store/open-db';
import { uniqueSuffix } from './ids';
import { TEST_POSTGRES_URL } from './services';

/**
 * One migrated database per test run, which every test that needs PostgreSQL copies
 * (`CREATE DATABASE … TEMPLATE`, a file copy of some milliseconds) instead of running the
 * migrations into a fresh schema of its own. The global set-up makes it and names it in this
 * variable, which the test workers inherit.
 */
const TEMPLATE_VARIABLE = 'SWITCHYARD_TEST_TEMPLATE_DATABASE';
/** The same for PGlite: a DATA_DIR whose embedded database is migrated, copied as files. */
const PGLITE_TEMPLATE_VARIABLE = 'SWITCHYARD_TEST_TEMPLATE_DATA_DIR';
/** The schema the template's tables are in, and so every copy's. */
const TEMPLATE_SCHEMA = 'switchyard';
/**
 * The PGlite template's: DATABASE_SCHEMA's default, which `npm start` uses, so that the
 * all-in-one runs on a copy as on a DATA_DIR of its own (its banner naming no schema).
 */
const PGLITE_TEMPLATE_SCHEMA = 'public';
/** `switchyard_template_<pid>_<random>`: the pid tells whether the run that made it still runs. */
const TEMPLATE_NAME = /^switchyard_template_(\d+)_[0-9a-f]+$/;

/** `TEST_POSTGRES_URL` with another database. */
export function databaseUrl(database: string): string {
  const url = new URL(TEST_POSTGRES_URL);
  url.pathname = `/${database}`;
  return url.toString();
}

async function withAdmin<T>(fn: (admin: Client) => Promise<T>): Promise<T> {
  const admin = new Client({ connectionString: TEST_POSTGRES_URL });
  await admin.connect();
  try {
    return await fn(admin);
  } finally {
    await admin.end();
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Makes this run's template (for the global set-up): a new database, migrated, then closed to
 * connections, which a copy needs. Templates of runs that are gone (killed before their
 * teardown) are dropped first.
 */
export async function createTemplateDatabases(): Promise<void> {
  // Two projects of one run share them.
  if (process.env[TEMPLATE_VARIABLE]) return;
  // One after the other: PGlite's initdb holds the event loop for seconds, long enough for a
  // PostgreSQL connection opened beside it to time out.
  await createPostgresTemplate();
  await createPgliteTemplate();
}

async function createPostgresTemplate(): Promise<void> {
  const name = `switchyard_template_${process.pid}_${uniqueSuffix()}`;
  await withAdmin(async (admin) => {
    const { rows } = await admin.query<{ datname: string }>(`SELECT datname FROM pg_database WHERE datname LIKE 'switchyard\\_template\\_%'`);
    for (const { datname } of rows) {
      const pid = TEMPLATE_NAME.exec(datname)?.[1];
      if (pid && !isRunning(Number(pid))) await admin.query(`DROP DATABASE IF EXISTS ${datname} WITH (FORCE)`);
    }
    await admin.query(`CREATE DATABASE ${name}`);
  });
  const db = await openDb({ databaseUrl: databaseUrl(name), schema: TEMPLATE_SCHEMA, dataDir: os.tmpdir() });
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
  await withAdmin((admin) => admin.query(`ALTER DATABASE ${name} WITH ALLOW_CONNECTIONS false`));
  process.env[TEMPLATE_VARIABLE] = name;
}

/** PGlite's first open of a folder (initdb) takes seconds; opening a copy of a closed one does not. */
async function createPgliteTemplate(): Promise<void> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-pglite-template-'));
  const db = await openDb({ databaseUrl: undefined, schema: PGLITE_TEMPLATE_SCHEMA, dataDir });
  try {
    await migrate(db);
  } finally {
    await db.close();
  }
  process.env[PGLITE_TEMPLATE_VARIABLE] = dataDir;
}

/** Drops this run's templates (for the global teardown). */
export async function dropTemplateDatabases(): Promise<void> {
  const name = process.env[TEMPLATE_VARIABLE];
  const dataDir = process.env[PGLITE_TEMPLATE_VARIABLE];
  delete process.env[TEMPLATE_VARIABLE];
  delete process.env[PGLITE_TEMPLATE_VARIABLE];
  if (name) await withAdmin((admin) => admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
  if (dataDir) await rm(dataDir, { recursive: true, force: true });
}

function templateName(variable: string): string {
  const template = process.env[variable];
  if (!template) throw new Error(`${variable} is not set: jest's global set-up (test/support/global-setup.ts) makes the template databases`);
  return template;
}

export interface TestDatabaseCopy {
  /** The copy's database on the test server. */
  url: string;
  /** The schema Switchyard's tables are in. */
  schema: string;
  drop(): Promise<void>;
}

/**
 * A migrated database of the test's own, copied from the run's template. Its deployment id is
 * made anew, as a fresh migration would, so that no two copies are one deployment.
 */
export async function copyTemplateDatabase(): Promise<TestDatabaseCopy> {
  const template = templateName(TEMPLATE_VARIABLE);
  const name = `t_${uniqueSuffix()}`;
  await withAdmin((admin) => admin.query(`CREATE DATABASE ${name} TEMPLATE ${template}`));
  const url = databaseUrl(name);
  const copy = new Client({ connectionString: url, options: `-c search_path=${TEMPLATE_SCHEMA}` });
  await copy.connect();
  try {
    await copy.query('UPDATE deployment SET id = gen_random_uuid()::text');
  } finally {
    await copy.end();
  }
  return {
    url,
    schema: TEMPLATE_SCHEMA,
    drop: () => withAdmin(async (admin) => void (await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`))),
  };
}

export interface TestDataDirCopy {
  /** A DATA_DIR of the test's own, its embedded database migrated and closed. */
  dataDir: string;
  schema: string;
  drop(): Promise<void>;
}

/**
 * A DATA_DIR of the test's own whose PGlite is a copy of the run's template, with a deployment id
 * of its own: for `npm start`'s process (workers/all-in-one.ts) too, where the test is not about
 * a first start on an empty DATA_DIR (PGlite's initdb and the migrations take 3–8 s of CPU; the
 * copy and its open about 1 s). It holds no dev API key or admin token yet: the all-in-one makes
 * them as on a first start.
 */
export async function copyPgliteTemplate(): Promise<TestDataDirCopy> {
  const dataDir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-pglite-'));
  await cp(templateName(PGLITE_TEMPLATE_VARIABLE), dataDir, { recursive: true });
  const db = await openDb({ databaseUrl: undefined, schema: PGLITE_TEMPLATE_SCHEMA, dataDir });
  try {
    await db.query('UPDATE deployment SET id = gen_random_uuid()::text');
  } finally {
    await db.close();
  }
  return { dataDir, schema: PGLITE_TEMPLATE_SCHEMA, drop: () => rm(dataDir, { recursive: true, force: true }) };
}
