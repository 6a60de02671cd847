import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { startTestStack, type TestStack } from '../../support/stack';

/**
 * The OpenAI SDK guide's code as a user copies it (docs/guides/openai-sdks.md: a batch from a JSONL
 * file, then a background response streamed and resumed), run with OpenAI's SDK against a started
 * stack and the scripted model, so that the page cannot rot.
 */
const ROOT = path.resolve(__dirname, '../../..');
const GUIDE = 'docs/guides/openai-sdks.md';

async function guideProgram(url: string): Promise<string> {
  const guide = await readFile(path.join(ROOT, GUIDE), 'utf8');
  const blocks = [...guide.matchAll(/```ts\n([\s\S]*?)```/g)].map((match) => match[1]!);
  if (blocks.length < 2) throw new Error(`${GUIDE} no longer has its two ts blocks (a batch, a background response)`);
  const program = blocks.slice(0, 2).join('\n');
  const pointed = program.replace("'http://127.0.0.1:3000/openai/v1'", `'${url}/openai/v1'`);
  if (pointed === program) throw new Error(`${GUIDE}'s example no longer sets baseURL: 'http://127.0.0.1:3000/openai/v1'`);
  return pointed;
}

describe("the OpenAI SDK guide's example", () => {
  let stack: TestStack;
  let dir: string;

  beforeAll(async () => {
    stack = await startTestStack({ workers: 1 });
    // Inside the repository, so that `import OpenAI from 'openai'` finds its node_modules.
    dir = await mkdtemp(path.join(ROOT, '.docs-example-'));
  });
  afterAll(async () => {
    await stack?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  it('runs a batch from requests.jsonl and streams a background response to its end', async () => {
    const { apiKey } = await stack.createUser('openai-guide');
    await writeFile(path.join(dir, 'example.mts'), await guideProgram(stack.url));
    const request = { model: 'scripted', messages: [{ role: 'user', content: 'Hello from the batch' }] };
    await writeFile(path.join(dir, 'requests.jsonl'), `${JSON.stringify({ custom_id: 'first', method: 'POST', url: '/v1/chat/completions', body: request })}\n`);

    const { stdout } = await promisify(execFile)(path.join(ROOT, 'node_modules/.bin/tsx'), ['example.mts'], {
      cwd: dir,
      env: { PATH: process.env.PATH ?? '', SY_KEY: apiKey },
      timeout: 50_000,
    });
    const [outputLine, ...streamed] = stdout.split('\n');
    const output = JSON.parse(outputLine!);
    expect(output).toMatchObject({ custom_id: 'first', response: { status_code: 200 } });
    expect(output.response.body.choices[0].message.content).toEqual(expect.any(String));
    // The background response's text, as the deltas printed it.
    expect(streamed.join('\n').length).toBeGreaterThan(0);
  }, 60_000);
});
