import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { readRepoFile } from '../support/deploy-files';
import { installPackedClient, type PackedClientProject } from '../support/packed-client';
import { startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';

/** What the README says of the browser bundle, and what this test holds it to. */
const BUNDLE_LIMIT_BYTES = 30 * 1024;

/** The README's client library example: the ```ts block after "**The client library**". */
function readmeSnippet(): string {
  const readme = readRepoFile('README.md');
  const section = readme.slice(readme.indexOf('**The client library**'));
  const block = /```ts\n([\s\S]*?)```/.exec(section);
  if (!block) throw new Error('README.md has no ts block after "**The client library**"');
  return block[1]!;
}

/**
 * @switchyard/client as a user gets it: packed, installed from the tarball into a project outside
 * the repository, type-checked and run there (the README's example against a real stack), and
 * bundled for browsers.
 */
describe('the client package, packed and installed elsewhere', () => {
  let project: PackedClientProject;
  let harness: ToolTurnHarness;

  beforeAll(async () => {
    [project, harness] = await Promise.all([installPackedClient(['ws', '@types/ws', 'typescript']), startToolTurnHarness()]);
  }, 180_000);
  afterAll(async () => {
    await harness?.close();
    await project?.remove();
  });

  it("type-checks the README's example with ws and @types/ws, and runs it on Node to the turn's text", async () => {
    const snippet = readmeSnippet();
    expect(snippet).toContain("from '@switchyard/client'");
    await writeFile(path.join(project.dir, 'readme-example.ts'), snippet);
    await writeFile(
      path.join(project.dir, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'nodenext', moduleResolution: 'nodenext', strict: true, skipLibCheck: false, outDir: 'out' }, files: ['readme-example.ts'] }),
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

  it(`bundles for browsers with esbuild: import { SwitchyardClient } is under ${BUNDLE_LIMIT_BYTES / 1024} KB minified`, async () => {
    const bundle = await project.bundle("import { SwitchyardClient } from '@switchyard/client';\nglobalThis.SwitchyardClient = SwitchyardClient;\n");
    expect(bundle).toContain('/v1/ws-tickets');
    expect(Buffer.byteLength(bundle)).toBeLessThan(BUNDLE_LIMIT_BYTES);
  });
});
