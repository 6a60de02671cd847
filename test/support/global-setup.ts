import { execFileSync } from 'node:child_process';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

/**
 * Once per run, before any test file: compiles the server into dist/, the build that the tests'
 * child processes run (test/support/processes.ts) and `npm run api` runs.
 */
export default function globalSetup(): void {
  execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'compile-server.js')], { stdio: 'inherit' });
}
