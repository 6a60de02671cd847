import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { apiClient } from '../support/http';
import { spawnEntry } from '../support/processes';
import { scripted } from '../support/scripted';
import { startTestStack, type TestStack } from '../support/stack';

/**
 * `watch` as a child process, pointed at the API by SWITCHYARD_URL and SWITCHYARD_API_KEY alone:
 * readable text by default (the tokens as text, tool calls as cards, statuses), the raw frames
 * with --json.
 */
describe('the CLI watch', () => {
  let stack: TestStack;
  let dataDir: string;
  let api: ReturnType<typeof apiClient>;
  let env: Record<string, string>;

  beforeAll(async () => {
    stack = await startTestStack();
    // A DATA_DIR with no dev key in it: the key comes from SWITCHYARD_API_KEY only.
    dataDir = await mkdtemp(path.join(os.tmpdir(), 'switchyard-watch-'));
    const user = await stack.resources.users.createUserWithKey('watcher');
    api = apiClient(stack.url, user.apiKey);
    env = { SWITCHYARD_URL: stack.url, SWITCHYARD_API_KEY: user.apiKey, DATA_DIR: dataDir };
  });
  afterAll(async () => {
    await stack.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  /** Starts `watch` with `args`; `until(text)` resolves once its stdout holds text; `stop()` is Ctrl-C. */
  function watch(args: string[]) {
    const child = spawnEntry('workers/cli.ts', env, ['watch', ...args]);
    let stdout = '';
    let stderr = '';
    let waiters: { text: string; resolve: () => void }[] = [];
    child.stderr!.on('data', (chunk) => (stderr += String(chunk)));
    child.stdout!.on('data', (chunk) => {
      stdout += String(chunk);
      waiters = waiters.filter((waiter) => !(stdout.includes(waiter.text) && (waiter.resolve(), true)));
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    return {
      until: (text: string) =>
        stdout.includes(text)
          ? Promise.resolve()
          : new Promise<void>((resolve, reject) => {
              waiters.push({ text, resolve });
              void exited.then((code) => reject(new Error(`watch exited (${code}) before printing ${JSON.stringify(text)}:\n${stdout}\n${stderr}`)));
            }),
      async stop() {
        child.kill('SIGINT');
        return { code: await exited, stdout, stderr };
      },
    };
  }

  const toolTurn = scripted({ steps: [{ text: 'Let me add.', toolCalls: [{ name: 'calculator', arguments: { expression: '2+2' } }] }, { text: 'It is 4.' }] });

  it('prints the text as it streams, tool calls as cards and statuses as lines', async () => {
    const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
    const watcher = watch([conversationId]);
    await watcher.until('[watching');
    const turnId = (await api.post(`/v1/conversations/${conversationId}/turns`, { content: toolTurn })).body.turnId as string;
    await watcher.until('[turn finished');
    const { code, stdout, stderr } = await watcher.stop();
    expect([code, stderr]).toEqual([0, '']);
    expect(stdout.split('\n')).toEqual([
      `[watching ${conversationId}; Ctrl-C stops]`,
      `[turn ${turnId} started]`,
      'Let me add.',
      expect.stringMatching(/^┌ calculator \(\S+\) \{"expression":"2\+2"\}$/),
      '[running 1 tool call]',
      expect.stringMatching(/^└ calculator \(\S+\) → .*4.* \(1 attempt, \d+ ms\)$/),
      '[step 2]',
      'It is 4.',
      expect.stringMatching(/^\[step 2: stop, \d+ tokens\]$/),
      expect.stringMatching(/^\[turn finished: stop, \d+ tokens\]$/),
      '',
    ]);
  }, 60_000);

  it('prints the raw frames with --json, one a line, from --after', async () => {
    const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
    await api.post(`/v1/conversations/${conversationId}/turns`, { content: scripted({ text: 'Done before the watch.' }) });
    const watcher = watch([conversationId, '--json', '--after', '0']);
    await watcher.until('"type":"turn-finish"');
    const { code, stdout } = await watcher.stop();
    expect(code).toBe(0);
    const frames = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(frames[0]).toEqual({ type: 'subscribed', conversationId, after: 0 });
    const events = frames.slice(1).map((frame) => frame.event);
    expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => i + 1));
    expect(
      events
        .filter((event) => event.type === 'text-delta')
        .map((event) => event.delta)
        .join(''),
    ).toBe('Done before the watch.');
  }, 60_000);
});
