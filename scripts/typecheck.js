// @ts-check
/**
 * `npm run typecheck`: the four TypeScript programs (the server with its tests, benchmarks and
 * scripts; the protocol package; the client package; the playground's browser app), each checked
 * by TypeScript 7, the native compiler (the `typescript-native` alias in package.json), which
 * checks them in about a fifth of TypeScript 5's CPU time. TypeScript 5 stays the `typescript`
 * package (and `tsc` in node_modules/.bin): the client package's build emits with it.
 *
 * Every program is checked even when an earlier one fails, so one run shows all the errors.
 * `--singleThreaded`: `.ci/run` gives this check one core of two (the linter has the other),
 * where TypeScript's parallel checkers only add work.
 */
const { spawnSync } = require('node:child_process');
const path = require('node:path');

const ROOT = path.resolve(__dirname, '..');
const TSC = path.join(path.dirname(require.resolve('typescript-native/package.json', { paths: [ROOT] })), 'bin', 'tsc');
const PROGRAMS = ['.', 'packages/protocol', 'packages/client', 'src/playground/app'];

let failed = false;
for (const program of PROGRAMS) {
  const result = spawnSync(process.execPath, [TSC, '--noEmit', '--singleThreaded', '-p', program], { cwd: ROOT, stdio: 'inherit' });
  if (result.status !== 0) {
    failed = true;
    process.stderr.write(`typecheck: ${program === '.' ? 'tsconfig.json' : `${program}/tsconfig.json`} failed\n`);
  }
}
process.exitCode = failed ? 1 : 0;
