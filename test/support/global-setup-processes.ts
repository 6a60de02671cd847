import { execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PACK_DIR } from './packed-tarball';
import { COMPILE_CACHE_DIR } from './processes';
import { createTemplateDatabases } from './template-database';

const ROOT = path.resolve(__dirname, '../..');

/**
 * Once per run, before the files that start processes: the template databases, the server
 * compiled into dist/, the build that their child processes run (test/support/processes.ts) and
 * `npm run api` runs, an empty directory for those processes' V8 code cache, and one for the
 * tarballs that `npm pack` makes once per run (test/support/packed-tarball.ts; the test files,
 * forked after this, inherit their names; the teardown removes them).
 */
export default async function globalSetup(): Promise<void> {
  execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'compile-server.js')], { stdio: 'inherit' });
  process.env[COMPILE_CACHE_DIR] = mkdtempSync(path.join(os.tmpdir(), 'switchyard-compile-cache-'));
  process.env[PACK_DIR] = mkdtempSync(path.join(os.tmpdir(), 'switchyard-packs-'));
  await createTemplateDatabases();
}
