import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { promisify } from 'node:util';
import { apiClient } from '../../support/http';
import { scripted } from '../../support/scripted';
import { startTestStack, type TestStack } from '../../support/stack';

/**
 * The programs of examples/ run as their READMEs say, against a started service and the scripted
 * model, so that they cannot rot: each is plain `node` on the example's file, its packages found
 * in the repository's node_modules (a copy outside it installs them with its package.json).
 */
const ROOT = path.resolve(__dirname, '../../..');
const example = (...parts: string[]) => path.join(ROOT, 'examples', ...parts);

describe('examples/', () => {
  let stack: TestStack;
  let apiKey: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    stack = await startTestStack({
      workers: 1,
      env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RELAY_INTERVAL_MS: '100', WEBHOOK_RETRY_DELAYS_MS: '100,200,200,200,200,500,1000,2000' },
    });
    ({ apiKey } = await stack.createUser('examples'));
  });
  afterAll(async () => {
    for (const child of children) child.kill();
    await stack?.close();
  });

  it('openai-sdk: streams a Chat Completion, then a Response and its follow-up in the same conversation', async () => {
    const { stdout } = await promisify(execFile)(process.execPath, [example('openai-sdk', 'index.js'), scripted({ text: 'Hello from the example.' })], {
      env: { PATH: process.env.PATH ?? '', SWITCHYARD_URL: stack.url, SWITCHYARD_API_KEY: apiKey },
      timeout: 50_000,
    });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toBe('chat.completions: Hello from the example.');
    expect(lines[1]).toBe('responses: Hello from the example.');
    // The follow-up's own message has no scenario: the scripted model's plain answer, in the same conversation.
    expect(lines[2]).toMatch(/^follow-up \(same conversation\): \S/);
  }, 60_000);

  it('webhook-receiver: refuses an event signed with another secret, then verifies and prints its redelivery once', async () => {
    const wrongSecret = `whsec_${Buffer.from('not the secret of the webhook').toString('base64')}`;
    const suspicious = await startReceiver({ PORT: '0', SWITCHYARD_WEBHOOK_SECRET: wrongSecret });
    const url = (await suspicious.printed(/listening on (\S+)/))[1]!;

    const api = apiClient(stack.url, apiKey);
    const created = await api.post('/v1/webhooks', { url, events: ['turn.completed'] });
    expect(created.status).toBe(201);
    const conversation = await api.post('/v1/conversations', {});
    const turn = await api.post(`/v1/conversations/${conversation.body.id}/turns`, { content: scripted({ text: 'Signed.' }) });
    expect(turn.status).toBe(202);
    await suspicious.printed(/refused: not signed with this secret/);
    await suspicious.stop();

    // The same port, the webhook's own secret: the next attempt of the same event is trusted.
    const trusted = await startReceiver({ PORT: new URL(url).port, SWITCHYARD_WEBHOOK_SECRET: created.body.secret });
    const data = JSON.parse((await trusted.printed(/verified turn\.completed (.*)\n/))[1]!);
    expect(data).toMatchObject({ turnId: turn.body.turnId, conversationId: conversation.body.id, status: 'completed' });
  }, 60_000);

  /** examples/webhook-receiver/server.js in a process of its own, its output read as it prints. */
  async function startReceiver(env: Record<string, string>) {
    const child = spawn(process.execPath, [example('webhook-receiver', 'server.js')], { env: { PATH: process.env.PATH ?? '', ...env }, stdio: ['ignore', 'pipe', 'inherit'] });
    children.push(child);
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const exited = once(child, 'exit');
    return {
      printed: (pattern: RegExp) =>
        new Promise<RegExpExecArray>((resolve, reject) => {
          const look = () => {
            const match = pattern.exec(output);
            if (match) resolve(match);
          };
          look();
          child.stdout!.on('data', look);
          void exited.then(() => reject(new Error(`the receiver exited before printing ${pattern}; it printed: ${output}`)));
        }),
      stop: async () => {
        child.kill();
        await exited;
      },
    };
  }
});
