import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { describeNeeding, missingProgram } from '../support/required-programs';

/**
 * The one-command path as a new user takes it: `npm start` on a machine with no Redis and no
 * PostgreSQL (a network namespace of its own: nothing on 127.0.0.1:6379), so it starts its own
 * redis-server on a free port, opens the embedded PGlite in DATA_DIR and talks to the scripted
 * model; then the example it prints, run as printed, and the CLI.
 */
const ROOT = path.resolve(__dirname, '../..');

/** Why npm start cannot have a network namespace of its own here, or undefined when it can. */
function namespacesMissing(): string | undefined {
  const program = missingProgram('unshare', 'apt-get install -y util-linux') ?? missingProgram('nsenter', 'apt-get install -y util-linux');
  if (program) return program;
  const probe = spawnSync('unshare', ['-n', 'true']);
  if (probe.status !== 0) return `unshare -n is refused here (it needs root or user namespaces): ${String(probe.stderr).trim()}`;
  return undefined;
}

describeNeeding(namespacesMissing(), 'npm start, as a new user runs it', () => {
  let dataDir: string;
  let server: ChildProcess;
  let output = '';
  let banner!: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-start-'));
    // unshare and sh exec: the pid is npm's, inside the new namespace (nsenter joins it below).
    server = spawn('unshare', ['-n', 'sh', '-c', 'ip link set lo up && exec npm start'], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', DATA_DIR: dataDir, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
      // A process group of its own, so that a stop reaches every process of it as Ctrl-C does.
      detached: true,
    });
    server.stdout!.on('data', (chunk) => (output += String(chunk)));
    server.stderr!.on('data', (chunk) => (output += String(chunk)));
    banner = await new Promise<string>((resolve, reject) => {
      const onData = () => {
        const end = output.indexOf('npm run cli -- watch');
        if (end >= 0) resolve(output.slice(0, output.indexOf('\n', end) + 1));
      };
      server.stdout!.on('data', onData);
      server.once('exit', (code) => reject(new Error(`npm start exited with ${code} before it was ready:\n${output}`)));
    });
  }, 60_000);

  afterAll(async () => {
    if (server && server.exitCode === null && server.signalCode === null) {
      process.kill(-server.pid!, 'SIGKILL');
      await new Promise((resolve) => server.once('exit', resolve));
    }
    if (dataDir) await rm(dataDir, { recursive: true, force: true });
  });

  /** Runs a command in npm start's network namespace (where its ports are). */
  function inside(command: string, env: Record<string, string> = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
    const child = spawn('nsenter', ['-t', String(server.pid), '-n', 'bash', '-c', command], {
      cwd: ROOT,
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += String(chunk)));
    child.stderr.on('data', (chunk) => (stderr += String(chunk)));
    return new Promise((resolve) => child.once('exit', (code) => resolve({ code, stdout, stderr })));
  }

  it('prints the URL, a dev key and an example that works as printed', async () => {
    expect(banner).toMatch(/Switchyard is running at http:\/\/127\.0\.0\.1:3000 {2}\(model: the scripted model at /);
    // Its own redis-server (on a free port), on a prefix of this DATA_DIR's own, and its PGlite.
    expect(banner).toMatch(/^Redis: redis:\/\/127\.0\.0\.1:\d+ \(REDIS_PREFIX switchyard-[0-9a-f]{12}\)$/m);
    expect(banner).toContain(`\nDatabase: the embedded PGlite in ${path.join(dataDir, 'db')}\n`);
    const apiKey = /Dev API key \(new; kept in DATA_DIR\/dev-api-key\): (sy_\S+)/.exec(banner)?.[1];
    expect(apiKey).toBeDefined();

    // The lines under "Try it (bash):", run as they are, in one shell.
    const lines = banner.split('\n');
    const example = lines.slice(
      lines.indexOf('Try it (bash):') + 1,
      lines.findIndex((line, i) => i > 0 && line === '' && lines[i - 1]!.includes('stored messages')),
    );
    expect(example.length).toBe(5);
    const run = await inside(`set -e\n${example.join('\n')}`);
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('event: turn-start');
    expect(run.stdout).toContain('event: turn-finish');
    const stored = JSON.parse(run.stdout.slice(run.stdout.lastIndexOf('\n{"id"') + 1));
    expect(stored.messages.map((message: { role: string }) => message.role)).toEqual(['user', 'assistant']);

    // The CLI's watch, as printed, follows the conversation over the websocket.
    const watch = /npm run cli -- watch \$CONV --url (\S+) --key \$SY_KEY/.exec(banner);
    expect(watch).not.toBeNull();
    const followed = await inside(`timeout -s INT 20 npm run --silent cli -- watch ${stored.id} --url ${watch![1]} --key ${apiKey} --after 0 | head -n 3`);
    expect(followed.stdout.split('\n')[0]).toBe(`[watching ${stored.id} after seq 0; Ctrl-C stops]`);
    expect(followed.stdout.split('\n')[1]).toMatch(/^\[turn turn_\S+ started\]$/);

    // The playground it built is served at /, and the example client tool is on offer.
    const page = await inside(
      `curl -s ${watch![1]}/ && curl -s -o /dev/null -w '%{http_code}' ${watch![1]}/app.js && curl -s ${watch![1]}/v1/tools -H "Authorization: Bearer ${apiKey}"`,
    );
    expect(page.stdout).toContain('<div id="root"></div>');
    expect(page.stdout).toMatch(/<\/html>\s*200/);
    expect(page.stdout).toContain('"name":"browser_timezone"');
  }, 60_000);

  it('runs the README\'s curl turn as it is written, and answers "use tools please" with the three built-in tools, none of them the example client tool', async () => {
    const url = /Switchyard is running at (\S+)/.exec(banner)![1]!;
    const apiKey = /Dev API key[^:]*: (sy_\S+)/.exec(banner)![1]!;
    const run = await inside(['set -e', readmeCurlTurn(url, apiKey)].join('\n'));
    expect([run.code, run.stderr]).toEqual([0, '']);
    const data = run.stdout
      .split('\n')
      .filter((line) => line.startsWith('data: '))
      .map((line) => JSON.parse(line.slice('data: '.length)));
    const started = data.find((event) => event.type === 'tool_processing_start');
    expect(started.toolCalls.map((call: { toolName: string }) => call.toolName)).toEqual(['calculator', 'current_time', 'random_number']);
    const results = data.filter((event) => event.type === 'tool-result');
    expect(results.map((result) => result.error ?? null)).toEqual([null, null, null]);
    expect(run.stdout).not.toContain('browser_timezone');
    expect(run.stdout).toContain('event: turn-finish');
  }, 60_000);

  it("refuses a second npm start on the same DATA_DIR with one line; the CLI's users and keys commands go through the running one", async () => {
    const second = await inside('npm start --silent', { DATA_DIR: dataDir, PORT: '3001', LOG_LEVEL: 'warn' });
    expect(second.code).toBe(1);
    expect(second.stderr.trim().split('\n')).toEqual([
      expect.stringMatching(/^switchyard: the embedded database in .* is in use by another process: stop it, or set DATABASE_URL/),
    ]);

    // Nothing but DATA_DIR: the database is held, so the default URL and DATA_DIR/dev-admin-token.
    const made = await inside('npm run --silent cli -- users create pia', { DATA_DIR: dataDir });
    expect([made.code, made.stderr]).toEqual([0, '']);
    const user = JSON.parse(made.stdout);
    const listed = await inside('npm run --silent cli -- users list', { DATA_DIR: dataDir });
    expect(JSON.parse(listed.stdout).map((each: { name: string }) => each.name)).toEqual(['dev', 'pia']);
    const revoked = await inside(`npm run --silent cli -- keys revoke ${user.keyId}`, { DATA_DIR: dataDir });
    expect([revoked.code, revoked.stderr]).toEqual([0, '']);
    const refused = await inside(`curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:3000/v1/conversations -H "Authorization: Bearer ${user.apiKey}"`);
    expect(refused.stdout).toBe('401');
  }, 60_000);

  it('stops on Ctrl-C, and its own redis-server with it', async () => {
    const exited = new Promise<void>((resolve) => server.once('exit', () => resolve()));
    process.kill(-server.pid!, 'SIGINT');
    await exited;
    expect(output).toContain('switchyard: SIGINT, shutting down');
    expect(output).not.toContain('not closed within');
    // Its logs are readable lines, not JSON.
    expect(output).not.toMatch(/^\{"level"/m);
    expect(output).not.toMatch(/\b(ERROR|FATAL)\b/);
    expect(spawnSync('pgrep', ['-f', `redis-server.*${dataDir}`]).stdout.toString()).toBe('');
  }, 60_000);
});

/** The README's curl turn (the bash block after "A turn with curl"), pointed at this server with its key. */
function readmeCurlTurn(url: string, apiKey: string): string {
  const readme = readFileSync(path.join(ROOT, 'README.md'), 'utf8');
  const block = /```bash\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('A turn with curl')))?.[1];
  if (!block) throw new Error('README.md has no bash block after "A turn with curl"');
  const pointed = block.replace(/^export SY_KEY=sy_\.\.\..*$/m, `export SY_KEY=${apiKey}`).replaceAll('localhost:3000', url);
  if (!pointed.includes(`SY_KEY=${apiKey}`)) throw new Error("README.md's curl turn no longer starts with export SY_KEY=sy_...");
  return pointed;
}
