import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { errorMessage } from '../../src/errors/switchyard-error';
import { poll } from './poll';

const run = promisify(execFile);
const ROOT = path.join(__dirname, '..', '..');

/** The environment variable through which the processes project's global set-up names the run's directory of packed tarballs. */
export const PACK_DIR = 'SWITCHYARD_TEST_PACK_DIR';

/** What `npm pack` made: the tarball's path and the paths it holds. */
export interface PackedTarball {
  file: string;
  files: string[];
}

/** What the file run that packed leaves for the others: the tarball, or why there is none. */
type PackResult = { packed: PackedTarball } | { failed: string };

/**
 * `npm pack` of the repository (`workspace` unset) or of one workspace (`@switchyard/client`),
 * once per test run: its prepack builds what it packs (the client package's tsc builds, the
 * server's compile), several CPU-seconds a pack. The first test file to ask packs into the run's
 * directory (PACK_DIR), holding a lock there (a directory made with mkdir, which one process
 * wins); the others, in other jest workers or later, wait for its result and install the same
 * tarball. Without the run's directory (a file run without the global set-up), it packs into
 * `fallbackDir`.
 */
export async function packOnce(workspace: string | undefined, fallbackDir: string): Promise<PackedTarball> {
  const runDir = process.env[PACK_DIR];
  if (!runDir) return pack(workspace, fallbackDir);
  const dir = path.join(runDir, workspace ? workspace.replace(/[^a-z0-9-]/gi, '_') : 'repository');
  const resultFile = path.join(dir, 'result.json');
  try {
    await mkdir(dir);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // Another file packs it: a pack of the repository is about a minute's work on a loaded machine.
    await poll(`npm pack of ${workspace ?? 'the repository'}: no result in ${resultFile} within 240 s`, () => existsSync(resultFile), 240_000, 200);
    const result = JSON.parse(await readFile(resultFile, 'utf8')) as PackResult;
    if ('failed' in result) throw new Error(`npm pack of ${workspace ?? 'the repository'} failed in another test file: ${result.failed}`);
    return result.packed;
  }
  let result: PackResult;
  try {
    result = { packed: await pack(workspace, dir) };
  } catch (error) {
    result = { failed: errorMessage(error) };
  }
  // Written whole, then renamed: a waiter reads all of it or nothing.
  await writeFile(`${resultFile}.tmp`, JSON.stringify(result));
  await rename(`${resultFile}.tmp`, resultFile);
  if ('failed' in result) throw new Error(result.failed);
  return result.packed;
}

async function pack(workspace: string | undefined, destination: string): Promise<PackedTarball> {
  const packed = await run('npm', ['pack', ...(workspace ? ['-w', workspace] : []), '--json', '--pack-destination', destination], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  const [{ filename, files }] = JSON.parse(packed.stdout.slice(packed.stdout.indexOf('['))) as [{ filename: string; files: { path: string }[] }];
  return { file: path.join(destination, filename), files: files.map((file) => file.path) };
}
