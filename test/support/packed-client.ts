import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { build } from 'esbuild';
import { packOnce } from './packed-tarball';

const run = promisify(execFile);

/** A project of its own outside the repository, with `@switchyard/client` installed from its packed tarball. */
export interface PackedClientProject {
  dir: string;
  /** Where the tarball was installed: node_modules/@switchyard/client. */
  packageDir: string;
  /** Runs a program in the project (its node_modules/.bin first on PATH); rejects, with its output, if it fails. */
  exec(command: string, args: string[], env?: Record<string, string>): Promise<{ stdout: string; stderr: string }>;
  /** Bundles `source` (an ES module written in the project) for browsers as esbuild does, minified. */
  bundle(source: string): Promise<string>;
  remove(): Promise<void>;
}

/**
 * `npm pack` of the workspace (its prepack builds it; once per run, test/support/packed-tarball.ts), then a new project in the system's temp
 * directory that installs the tarball and `packages` from the registry, as a user would.
 */
export async function installPackedClient(packages: string[]): Promise<PackedClientProject> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-client-user-'));
  const exec = async (command: string, args: string[], env: Record<string, string> = {}) => {
    try {
      return await run(command, args, {
        cwd: dir,
        env: { ...process.env, ...env, PATH: `${path.join(dir, 'node_modules', '.bin')}${path.delimiter}${process.env.PATH}` },
        maxBuffer: 16 * 1024 * 1024,
      });
    } catch (error) {
      const failed = error as Error & { stdout?: string; stderr?: string };
      throw new Error(`${command} ${args.join(' ')} failed: ${failed.message}\n${failed.stdout ?? ''}\n${failed.stderr ?? ''}`);
    }
  };
  const tarball = await packOnce('@switchyard/client', dir);
  await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'client-package-user', private: true, type: 'module' }));
  await exec('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball.file, ...packages]);
  return {
    dir,
    packageDir: path.join(dir, 'node_modules', '@switchyard', 'client'),
    exec,
    async bundle(source) {
      const entry = path.join(dir, `entry-${Math.random().toString(36).slice(2)}.js`);
      await writeFile(entry, source);
      const outfile = `${entry}.bundle.js`;
      await build({ entryPoints: [entry], absWorkingDir: dir, bundle: true, minify: true, format: 'esm', platform: 'browser', outfile, logLevel: 'silent' });
      return readFile(outfile, 'utf8');
    },
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}
