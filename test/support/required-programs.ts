import fs from 'node:fs';
import path from 'node:path';

/**
 * Tests that need a program a developer's machine may lack (Chromium, Prometheus, unshare).
 * Locally such tests are skipped, saying what is missing and how to install it; in CI
 * (`CI=true`) they fail with the same words, so that CI never passes by running less.
 */

/** Where an executable is: `nameOrPath` itself when it holds a slash, else the first on PATH (then /usr/bin, /usr/local/bin). */
export function findExecutable(nameOrPath: string): string | undefined {
  const candidates = nameOrPath.includes('/')
    ? [nameOrPath]
    : [...(process.env.PATH ?? '').split(path.delimiter), '/usr/bin', '/usr/local/bin'].filter(Boolean).map((dir) => path.join(dir, nameOrPath));
  return candidates.find((candidate) => {
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      return fs.statSync(candidate).isFile();
    } catch {
      return false;
    }
  });
}

/** Why tests needing `nameOrPath` cannot run here (naming it, as `label` if given, and how to `install` it), or undefined when they can. */
export function missingProgram(nameOrPath: string, install: string, label?: string): string | undefined {
  if (findExecutable(nameOrPath)) return undefined;
  return `${label ? `${label} (${nameOrPath})` : nameOrPath} is not installed: ${install}`;
}

/**
 * `describe(name, fn)` for tests that need what `missing` names (from `missingProgram`, or a probe
 * of the test's own; undefined when all is there). Without it: skipped locally, the reason in the
 * suite's name and on the console; with `CI=true`, one test that fails giving the reason.
 */
export function describeNeeding(missing: string | undefined, name: string, fn: () => void): void {
  if (missing === undefined) {
    describe(name, fn);
  } else if (process.env.CI === 'true') {
    describe(name, () => {
      it('has what it needs (CI=true: a missing program fails the run)', () => {
        throw new Error(missing);
      });
    });
  } else {
    console.warn(`skipped "${name}": ${missing}`);
    describe.skip(`${name} [skipped: ${missing}]`, fn);
  }
}
