import { statSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { apiClient } from '../support/http';
import { runToExit, spawnAllInOne, type AllInOneProcess } from '../support/processes';
import { dropRedisPrefix, TEST_REDIS_URL } from '../support/services';
import { copyPgliteTemplate, type TestDataDirCopy } from '../support/template-database';

/**
 * The CLI's users and keys commands while `npm start`'s process runs on the embedded database
 * (which it holds: the CLI cannot open it): they go through the service's admin routes with the
 * ADMIN_TOKEN it made and keeps in DATA_DIR/dev-admin-token. (npm-start.test.ts runs them at the
 * default URL, with nothing but DATA_DIR; here the service is on a free port, given by
 * SWITCHYARD_URL or --url.)
 */
describe("the CLI's admin commands while npm start runs", () => {
  let copy: TestDataDirCopy;
  let dataDir: string;
  let start: AllInOneProcess;

  beforeAll(async () => {
    // A copy of the run's migrated PGlite: what is tested here is not a first start's initdb.
    copy = await copyPgliteTemplate();
    dataDir = copy.dataDir;
    start = await spawnAllInOne({ DATA_DIR: dataDir, PLAYGROUND_DIR: path.join(dataDir, 'playground'), REDIS_URL: TEST_REDIS_URL, LOG_LEVEL: 'warn' });
  }, 150_000);
  afterAll(async () => {
    await start?.kill();
    const prefix = start && /\(REDIS_PREFIX (\S+)\)/.exec(start.redis)?.[1];
    if (prefix) await dropRedisPrefix(prefix);
    await copy?.drop();
  });

  const cli = (args: string[], env: Record<string, string> = {}) => runToExit('workers/cli.ts', { DATA_DIR: dataDir, SWITCHYARD_URL: start.url, ...env }, args);
  const json = (run: { code: number | null; stdout: string; stderr: string }) => {
    expect([run.code, run.stderr]).toEqual([0, '']);
    return JSON.parse(run.stdout);
  };

  it('keeps a dev admin token in DATA_DIR (mode 0600) and says so, never printing it', async () => {
    const token = (await readFile(path.join(dataDir, 'dev-admin-token'), 'utf8')).trim();
    expect(token).toMatch(/^sya_\S{40,}$/);
    expect(statSync(path.join(dataDir, 'dev-admin-token')).mode & 0o777).toBe(0o600);
    expect(start.stdout()).toContain('Admin token: kept in DATA_DIR/dev-admin-token (mode 0600)');
    expect(start.stdout()).not.toContain(token);
    expect((await apiClient(start.url, token).get('/v1/admin/users')).status).toBe(200);
  });

  it('makes a user, lists users, adds, lists and revokes keys, a revoked key refused at once', async () => {
    const made = json(await cli(['users', 'create', 'olga']));
    expect(made).toEqual({ id: expect.stringMatching(/^user_/), name: 'olga', keyId: expect.stringMatching(/^key_/), apiKey: expect.stringMatching(/^sy_/) });
    expect((await apiClient(start.url, made.apiKey).get('/v1/conversations')).status).toBe(200);
    expect(json(await cli(['users', 'list'])).map((user: { name: string }) => user.name)).toEqual(['dev', 'olga']);

    const key = json(await cli(['keys', 'create', made.id, '--name', 'ci']));
    expect(key).toEqual({ id: expect.stringMatching(/^key_/), userId: made.id, name: 'ci', apiKey: expect.stringMatching(/^sy_/) });
    const ci = apiClient(start.url, key.apiKey);
    expect((await ci.get('/v1/conversations')).status).toBe(200);
    const listed = json(await cli(['keys', 'list', made.id]));
    expect(listed.map((each: { id: string; name: string | null }) => [each.id, each.name])).toEqual([
      [made.keyId, null],
      [key.id, 'ci'],
    ]);

    const revoked = json(await cli(['keys', 'revoke', key.id]));
    expect(revoked).toEqual({ revoked: key.id, revokedAt: expect.any(String), announced: true });
    expect((await ci.get('/v1/conversations')).status).toBe(401);
    expect(json(await cli(['keys', 'list', made.id]))[1]).toMatchObject({ id: key.id, revokedAt: revoked.revokedAt });

    // --url says where as well; the service checks tool names against its own tools.
    const byFlag = ['--url', start.url];
    expect(json(await cli(['users', 'tools', made.id, 'calculator', ...byFlag], { SWITCHYARD_URL: 'http://127.0.0.1:9' }))).toEqual({ id: made.id, allowedTools: ['calculator'] });
    const unknown = await cli(['users', 'tools', made.id, 'calculator,nope']);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('nope');

    expect(await cli(['keys', 'revoke', 'key_nobody'])).toMatchObject({ code: 1, stderr: expect.stringMatching(/^no key key_nobody/) });
    expect(await cli(['keys', 'list', 'user_nobody'])).toMatchObject({ code: 1, stderr: 'no user user_nobody\n' });
  }, 60_000);

  it('names what to do when the admin token is wrong or missing', async () => {
    const wrong = await cli(['users', 'list'], { ADMIN_TOKEN: 'not-the-token-of-this-service' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain('admin token');
    const elsewhere = await mkdtemp(path.join(os.tmpdir(), 'switchyard-cli-admin-none-'));
    try {
      const none = await cli(['users', 'list'], { DATA_DIR: elsewhere });
      expect(none.code).toBe(1);
      expect(none.stderr.trim().split('\n')).toEqual([expect.stringMatching(/^no admin token: pass --key <ADMIN_TOKEN>, set ADMIN_TOKEN, or run `npm start`/)]);
    } finally {
      await rm(elsewhere, { recursive: true, force: true });
    }
  }, 60_000);
});
