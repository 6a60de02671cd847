import { existsSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { closedPort } from '../support/ports';
import { runToExit } from '../support/processes';
import { startTestStack, type TestStack } from '../support/stack';

/** `npm run cli`, as a child process: help, refusals that name what is wrong, and keys. */
describe('the CLI', () => {
  let stack: TestStack;
  let dir: string;

  beforeAll(async () => {
    stack = await startTestStack({ workers: 0 });
    dir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-cli-'));
  });
  afterAll(() => stack.close());

  const cli = (args: string[], env: Record<string, string> = stack.childEnv({ LOG_LEVEL: 'silent' })) => runToExit('workers/cli.ts', env, args);

  it('prints usage and exits 0 on --help, at the top level and for a command, and points to it on an unknown option', async () => {
    const top = await cli(['--help'], {});
    expect([top.code, top.stderr]).toEqual([0, '']);
    expect(top.stdout).toMatch(/^usage: npm run cli -- <command>/);
    for (const command of ['users create', 'keys list', 'keys revoke', 'batch run', 'watch']) expect(top.stdout).toContain(`  ${command}`);

    const revoke = await cli(['keys', 'revoke', '--help'], {});
    expect([revoke.code, revoke.stderr]).toEqual([0, '']);
    expect(revoke.stdout).toMatch(/^usage: npm run cli -- keys revoke <keyId>\n/);
    const run = await cli(['batch', 'run', '-h'], {});
    expect([run.code, run.stdout]).toEqual([0, expect.stringMatching(/^usage: npm run cli -- batch run <items\.jsonl> --out <results\.jsonl> .*--skip-invalid/)]);
    const watch = await cli(['watch', '--help'], {});
    expect([watch.code, watch.stdout]).toEqual([0, expect.stringMatching(/^usage: npm run cli -- watch <conversationId>/)]);

    const unknown = await cli(['users', 'list', '--colour'], {});
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("Unknown option '--colour'");
    expect(unknown.stderr).toContain('npm run cli -- --help');
  }, 60_000);

  it("refuses to revoke a key that does not exist, and lists a user's keys without the keys, in the database itself", async () => {
    const user = await stack.resources.users.createUserWithKey('frank');
    const unknown = await cli(['keys', 'revoke', 'key_nobody']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/^no key key_nobody/);

    const listed = await cli(['keys', 'list', user.id]);
    expect([listed.code, listed.stderr]).toEqual([0, '']);
    expect(JSON.parse(listed.stdout)).toEqual([{ id: user.keyId, name: null, prefix: user.apiKey.slice(0, 9), createdAt: expect.any(String), lastUsedAt: null }]);
    expect(listed.stdout).not.toContain(user.apiKey);

    const revoked = await cli(['keys', 'revoke', user.keyId]);
    expect(JSON.parse(revoked.stdout)).toEqual({ revoked: user.keyId, revokedAt: expect.any(String), announced: true });
    // Again: answered as it is, as DELETE /v1/admin/keys/:id is.
    const again = await cli(['keys', 'revoke', user.keyId]);
    expect([again.code, again.stderr, JSON.parse(again.stdout).revokedAt]).toEqual([0, '', JSON.parse(revoked.stdout).revokedAt]);
    expect(JSON.parse((await cli(['keys', 'list', user.id])).stdout)[0].revokedAt).toEqual(expect.any(String));
    expect(await cli(['keys', 'list', 'user_nobody'])).toMatchObject({ code: 1, stderr: 'no user user_nobody\n' });
  }, 60_000);

  it('refuses a DATA_DIR that holds no database, naming it, and makes none there', async () => {
    const elsewhere = path.join(dir, 'not-the-servers');
    const run = await cli(['users', 'list'], { DATA_DIR: elsewhere, LOG_LEVEL: 'silent' });
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringContaining(`no Switchyard database in DATA_DIR ${elsewhere} `)]);
    expect(existsSync(path.join(elsewhere, 'db'))).toBe(false);
  }, 60_000);

  it('names the URL and the cause when nothing answers there, and gives up (watch after a few attempts)', async () => {
    const url = `http://127.0.0.1:${await closedPort()}`;
    const watch = await cli(['watch', 'conv_x', '--url', url, '--key', 'sy_whatever'], {});
    expect(watch.code).toBe(1);
    expect(watch.stderr.trim().split('\n')).toEqual([
      `watch: cannot reach the Switchyard API at ${url} (--url): ECONNREFUSED, connection refused (is it running, on that host and port?); gave up after 5 attempts`,
    ]);

    const status = await cli(['batch', 'status', 'batch_x', '--url', url, '--key', 'sy_whatever'], {});
    expect(status.code).toBe(1);
    expect(status.stderr).toContain(`cannot reach the Switchyard API at ${url} (--url): ECONNREFUSED`);

    const items = path.join(dir, 'items.jsonl');
    await writeFile(items, `${JSON.stringify({ messages: ['hi'] })}\n`);
    const run = await cli(['batch', 'run', items, '--out', path.join(dir, 'out.jsonl'), '--url', url, '--key', 'sy_whatever'], {});
    expect(run.code).toBe(1);
    expect(run.stderr.trim().split('\n')).toEqual([expect.stringContaining(`cannot reach the Switchyard API at ${url} (--url): ECONNREFUSED`)]);
  }, 60_000);
});
