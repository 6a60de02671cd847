import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { apiClient } from '../support/http';
import { packOnce } from '../support/packed-tarball';
import { startTestStack, type TestStack } from '../support/stack';

const run = promisify(execFile);
const ADMIN_TOKEN = 'admin-token-for-bin-tests-0123';

/**
 * The `switchyard` bin as a user gets it: `npm pack` of the repository (its prepack compiles
 * dist/; once per run, test/support/packed-tarball.ts), installed from the tarball into a project of its own outside the checkout, then run
 * with `npx switchyard`: the compiled CLI, its usage named after the bin, talking to a service.
 */
describe('npx switchyard, installed from the packed tarball', () => {
  let stack: TestStack;
  let dir: string;
  const npx = (args: string[], env: Record<string, string> = {}) =>
    run('npx', ['--no-install', 'switchyard', ...args], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: path.join(dir, '.switchyard'), ...env },
    }).then(
      (done) => ({ code: 0, ...done }),
      (failed: { code: number; stdout: string; stderr: string }) => ({ code: failed.code, stdout: failed.stdout, stderr: failed.stderr }),
    );

  beforeAll(async () => {
    stack = await startTestStack({ workers: 0, env: { ADMIN_TOKEN } });
    dir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-bin-user-'));
    const { file: tarball, files: paths } = await packOnce(undefined, dir);
    expect(paths).toEqual(expect.arrayContaining(['dist/workers/cli.js', 'migrations/0001_init.sql', 'package.json']));
    expect(paths.filter((file) => /^(src|test|packages)\//.test(file) || file.startsWith('dist/playground/'))).toEqual([]);
    await writeFile(path.join(dir, 'package.json'), JSON.stringify({ name: 'switchyard-bin-user', private: true }));
    await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', tarball], { cwd: dir, maxBuffer: 16 * 1024 * 1024 });
  }, 240_000);
  afterAll(async () => {
    await stack?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('prints its usage named after the bin', async () => {
    const help = await npx(['--help']);
    expect([help.code, help.stderr]).toEqual([0, '']);
    expect(help.stdout).toMatch(/^usage: switchyard <command> \[--help\]\n/);
    expect(help.stdout).toContain('  keys revoke <keyId>');
    expect((await npx(['keys', 'list'])).stderr).toBe('usage: switchyard keys list <userId>\n');
  }, 60_000);

  it('makes a user and its key through the admin routes of the service SWITCHYARD_URL names', async () => {
    const made = await npx(['users', 'create', 'quinn'], { SWITCHYARD_URL: stack.url, ADMIN_TOKEN });
    expect([made.code, made.stderr]).toEqual([0, '']);
    const user = JSON.parse(made.stdout);
    expect((await apiClient(stack.url, user.apiKey).get('/v1/keys')).body.data).toEqual([expect.objectContaining({ id: user.keyId })]);
    const refused = await npx(['users', 'list'], { SWITCHYARD_URL: stack.url });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^no admin token: /);
  }, 60_000);
});
