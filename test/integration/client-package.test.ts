import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { readRepoFile } from '../support/deploy-files';
import { installPackedClient, type PackedClientProject } from '../support/packed-client';
import { startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';

/** What the project using the package installs besides it from the registry. */
const PROJECT_PACKAGES = ['ws', '@types/ws', 'typescript'];
/** What docs/guides/client-library.md says of the browser bundle, and what this test holds it to. */
const BUNDLE_LIMIT_BYTES = 30 * 1024;

/** The client library guide's example: the ```ts block after "**The client library**". */
function readmeSnippet(): string {
  const guide = readRepoFile('docs/guides/client-library.md');
  const section = guide.slice(guide.indexOf('**The client library**'));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('docs/guides/client-library.md has no ts block after "**The client library**"');
  return block[1]!;
}

/**
 * A user's code that reads the answers field by field: it compiles only if the package's
 * declarations type them (a hand-written `Record<string, unknown>` or `unknown[]` fails it, as a
 * `@ts-expect-error` that no longer finds its error does).
 */
const TYPED_ANSWERS = `
import { SwitchyardClient, type ApprovalDecision, type PendingApproval, type TurnStatus } from '@switchyard/client';

export async function read(client: SwitchyardClient): Promise<void> {
  const conversation = await client.createConversation({ title: 'typed' });
  const lastSeq: number = conversation.lastSeq;
  const accepted = await client.sendTurn(conversation.id, 'hello');
  const status: TurnStatus = accepted.status;
  const turn = await client.getTurn(accepted.turnId);
  const calls: { name: string; attempts: number; durationMs: number }[] = turn.toolCalls.map((call) => ({ name: call.toolName, attempts: call.attempts, durationMs: call.durationMs }));
  const tokens: number = turn.usage.totalTokens + turn.steps.reduce((sum, step) => sum + step.usage.promptTokens, 0);
  const started: string | null = turn.timings.startedAt;
  // @ts-expect-error a field no turn has
  turn.noSuchField;
  const roles: ('user' | 'assistant' | 'tool')[] = (await client.getConversation(conversation.id)).messages.map((message) => message.role);
  const messageId: string = (await client.getConversation(conversation.id)).messages[0]!.id;
  const cancelled: TurnStatus = (await client.cancelTurn(accepted.turnId)).status;
  const fork = await client.forkConversation(conversation.id, messageId);
  const forkedFrom: string | undefined = fork.forkedFrom?.conversationId;
  const pending: PendingApproval[] = (await client.listPendingApprovals()).data;
  const requestedAt: string | undefined = pending[0]?.requestedAt;
  const decision: ApprovalDecision = await client.approve(accepted.turnId, 'call_1', true);
  const reason: string | null = decision.reason;
  const taken: boolean = (await client.answerToolCall(accepted.turnId, 'call_1', { result: 1 })).accepted;
  console.log(lastSeq, status, calls, tokens, started, roles, cancelled, forkedFrom, requestedAt, reason, taken);
}
`;

/**
 * A user's code that sends bodies: it compiles only if the package's declarations type the
 * methods' options as the server checks them (an option the server refuses, or a known one of the
 * wrong type, is an error each `@ts-expect-error` must find).
 */
const TYPED_REQUESTS = `
import { SwitchyardClient, type TurnOptions } from '@switchyard/client';

export async function send(client: SwitchyardClient, messageId: string): Promise<void> {
  const conversation = await client.createConversation({ title: 'typed', tools: ['calculator'], requireApproval: ['calculator'], metadata: { team: 1 } });
  // @ts-expect-error an option no conversation has
  await client.createConversation({ titel: 'typo' });
  const options: TurnOptions = { model: 'scripted', maxSteps: 3, toolChoice: { type: 'function', function: { name: 'calculator' } }, idempotencyKey: 'k-1' };
  const { turnId } = await client.sendTurn(conversation.id, [{ type: 'text', text: 'hello' }], { ...options, onBusy: 'enqueue' });
  // @ts-expect-error an option the server refuses
  await client.sendTurn(conversation.id, 'hello', { noSuchOption: true });
  // @ts-expect-error onBusy is reject, enqueue or interrupt
  await client.sendTurn(conversation.id, 'hello', { onBusy: 'wait' });
  // @ts-expect-error maxSteps is a number
  await client.sendTurn(conversation.id, 'hello', { maxSteps: '3' });
  // @ts-expect-error content is text or content parts
  await client.sendTurn(conversation.id, 42);
  await client.regenerate(conversation.id, { fromMessageId: messageId, onBusy: 'interrupt' });
  // @ts-expect-error a regenerate posts no content
  await client.regenerate(conversation.id, { content: 'again' });
  await client.editMessage(conversation.id, messageId, 'edited', { model: 'scripted' });
  // @ts-expect-error the message an edit replaces is its argument, not an option
  await client.editMessage(conversation.id, messageId, 'edited', { fromMessageId: messageId });
  await client.answerToolCall(turnId, 'call_1', { error: { code: 'failed', message: 'no network', retryable: false } });
  // @ts-expect-error a tool's error has a message
  await client.answerToolCall(turnId, 'call_1', { error: { code: 'failed' } });
  await client.approve(turnId, 'call_2', true, 'looks right', { expression: '6*7' });
}
`;

/**
 * @switchyard/client as a user gets it: packed, installed from the tarball into a project outside
 * the repository, type-checked and run there (the client library guide's example against a real stack), and
 * bundled for browsers.
 */
describe('the client package, packed and installed elsewhere', () => {
  let project: PackedClientProject;
  let harness: ToolTurnHarness;

  beforeAll(async () => {
    [project, harness] = await Promise.all([installPackedClient(PROJECT_PACKAGES), startToolTurnHarness()]);
  }, 180_000);
  afterAll(async () => {
    await harness?.close();
    await project?.remove();
  });

  it("type-checks the client library guide's example with ws and @types/ws, and runs it on Node to the turn's text", async () => {
    const snippet = readmeSnippet();
    expect(snippet).toContain("from '@switchyard/client'");
    await writeFile(path.join(project.dir, 'readme-example.ts'), snippet);
    await writeFile(
      path.join(project.dir, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, skipLibCheck: false, outDir: 'out' },
        files: ['readme-example.ts'],
      }),
    );
    await project.exec('tsc', ['-p', 'tsconfig.json']);

    const { stdout } = await project.exec('node', ['out/readme-example.js'], { SY_URL: harness.stack.url, SY_KEY: harness.apiKey });
    const { body: list } = await harness.api.get('/v1/conversations?limit=1');
    const { body: conversation } = await harness.api.get(`/v1/conversations/${list.data[0].id}`);
    expect(conversation.title).toBe('demo');
    const answer = conversation.messages.filter((message: any) => message.role === 'assistant' && typeof message.content === 'string' && message.content).at(-1);
    expect(answer.content).toMatch(/^Tool results: /);
    // The view's text as the example prints it, then the turn's events from turn-start to turn-finish.
    expect(stdout).toContain(`completed ${answer.content.length} chars${answer.content} [`);
    expect(stdout).toMatch(/\d+ turn-start\n[\s\S]*\d+ turn-finish\n$/);
  }, 60_000);

  it("brings only its own dependencies, none of the server's, and is ESM that import() loads", async () => {
    const manifest = JSON.parse(await readFile(path.join(project.packageDir, 'package.json'), 'utf8'));
    expect(Object.keys(manifest.dependencies).sort()).toEqual(['eventsource-parser', 'zod']);
    expect(manifest.peerDependencies ?? {}).toEqual({});
    expect(manifest.optionalDependencies ?? {}).toEqual({});
    // Nothing of the server came with it: none of the root's dependencies but the client's own and what this project asked for.
    const root = JSON.parse(readRepoFile('package.json'));
    const serverOnly = Object.keys(root.dependencies).filter((name) => !(name in manifest.dependencies) && !PROJECT_PACKAGES.includes(name));
    expect(serverOnly).toEqual(expect.arrayContaining(['express', 'bullmq', 'pg', 'ioredis', 'openai']));
    expect(serverOnly.filter((name) => existsSync(path.join(project.dir, 'node_modules', name)))).toEqual([]);

    expect(manifest.type).toBe('module');
    expect(manifest.exports['.'].import).toBe('./dist/index.js');
    // Under "type": "module" Node reads dist/index.js as ESM: CommonJS there (exports.X = …) would not load.
    const { stdout } = await project.exec('node', [
      '--input-type=module',
      '-e',
      "const byName = await import('@switchyard/client'); const byFile = await import('./node_modules/@switchyard/client/dist/index.js'); console.log(typeof byName.SwitchyardClient, byName.SwitchyardClient === byFile.SwitchyardClient, typeof byName.storedToUiMessages);",
    ]);
    expect(stdout.trim()).toBe('function true function');
  });

  it("types its methods' answers, and the bodies they send, as the server's schemas have them", async () => {
    await writeFile(path.join(project.dir, 'typed-answers.ts'), TYPED_ANSWERS);
    await writeFile(path.join(project.dir, 'typed-requests.ts'), TYPED_REQUESTS);
    await writeFile(
      path.join(project.dir, 'tsconfig.answers.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, skipLibCheck: false, noEmit: true },
        files: ['typed-answers.ts', 'typed-requests.ts'],
      }),
    );
    await project.exec('tsc', ['-p', 'tsconfig.answers.json']);
  }, 60_000);

  it(`bundles for browsers with esbuild: import { SwitchyardClient } is under ${BUNDLE_LIMIT_BYTES / 1024} KB minified`, async () => {
    const bundle = await project.bundle("import { SwitchyardClient } from '@switchyard/client';\nglobalThis.SwitchyardClient = SwitchyardClient;\n");
    expect(bundle).toContain('/v1/ws-tickets');
    expect(Buffer.byteLength(bundle)).toBeLessThan(BUNDLE_LIMIT_BYTES);
  });
});
