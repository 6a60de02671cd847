import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { createTemplateDatabases } from './template-database';

const ROOT = path.resolve(__dirname, '../..');

/**
 * Once per run, before the files that start processes: the template databases, and the server
 * compiled into dist/, the build that their child processes run (test/support/processes.ts) and
 * `npm run api` runs.
 */
export default async function globalSetup(): Promise<void> {
  execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'compile-server.js')], { stdio: 'inherit' });
  await createTemplateDatabases();
}
