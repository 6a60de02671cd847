import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { bundleReactPage } from '../../src/playground/build';
import { CHROMIUM_MISSING, launchChromium } from '../support/chromium';
import { apiClient } from '../support/http';
import { describeNeeding } from '../support/required-programs';
import { scripted } from '../support/scripted';
import { startTestStack, type TestStack } from '../support/stack';

/** What the callbacks passed to `page.evaluate` see; they run in the page, not here. */
declare const document: any;

const ROOT = path.join(__dirname, '..', '..');

/**
 * Both AI SDK majors the guide promises: the root's ai 6 (@ai-sdk/react 3), and ai 7 (@ai-sdk/react 4)
 * from the test/fixtures/ai-sdk-7 workspace, whose node_modules is looked in first.
 */
const AI_SDKS = [
  { major: 6, nodePaths: [path.join(ROOT, 'node_modules')] },
  { major: 7, nodePaths: [path.join(ROOT, 'test', 'fixtures', 'ai-sdk-7', 'node_modules'), path.join(ROOT, 'node_modules')] },
];

/**
 * A front end on another origin, as a developer builds it from docs/guides/use-chat.md: its `useChat`
 * component, bundled with React and each AI SDK major, served from a port of its own, calling the API
 * on another with a session token and ALLOWED_ORIGINS set to the page's origin.
 */
describe.each(AI_SDKS)('AI SDK $major', ({ major, nodePaths }) => {
  describeNeeding(CHROMIUM_MISSING, 'a useChat app on another origin, in a browser', () => {
    let pages: http.Server;
    let pageOrigin: string;
    let stack: TestStack;
    let api: ReturnType<typeof apiClient>;
    let browser: Browser;
    let page: Page;
    /** What the page logged as errors (a CORS refusal shows here): part of a failure's message. */
    const pageErrors: string[] = [];

    beforeAll(async () => {
      const files = new Map<string, { type: string; body: string | Buffer }>();
      pages = http.createServer((req, res) => {
        const file = files.get(new URL(req.url ?? '/', 'http://page').pathname);
        if (!file) return void res.writeHead(404).end();
        res.writeHead(200, { 'content-type': file.type }).end(file.body);
      });
      await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
      pageOrigin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;

      stack = await startTestStack({ env: { ALLOWED_ORIGINS: pageOrigin } });
      api = apiClient(stack.url, (await stack.createUser('cross-origin-app')).apiKey);
      const sourceDir = await mkdtemp(path.join(os.tmpdir(), 'cross-origin-app-'));
      await writeFile(path.join(sourceDir, 'readme-chat.tsx'), await readmeChatComponent(stack.url));
      await writeFile(
        path.join(sourceDir, 'main.tsx'),
        [
          "import { createRoot } from 'react-dom/client';",
          "import { ChatPage } from './readme-chat';",
          'const params = new URLSearchParams(location.search);',
          "createRoot(document.getElementById('root')!).render(<ChatPage chatId={params.get('chat')!} sessionToken={params.get('token')!} />);",
        ].join('\n'),
      );
      await bundleReactPage(path.join(sourceDir, 'main.tsx'), path.join(sourceDir, 'app.js'), nodePaths);
      const bundle = await readFile(path.join(sourceDir, 'app.js'));
      // The page runs the major this block names: the bundle carries the resolved `ai`'s version string.
      const { version } = JSON.parse(await readFile(require.resolve('ai/package.json', { paths: nodePaths }), 'utf8')) as { version: string };
      expect(version.split('.')[0]).toBe(String(major));
      expect(bundle.toString()).toContain(`"${version}"`);
      files.set('/', { type: 'text/html', body: '<!doctype html><div id="root"></div><script type="module" src="/app.js"></script>' });
      files.set('/app.js', { type: 'text/javascript', body: bundle });
      files.set('/favicon.ico', { type: 'image/x-icon', body: '' });

      browser = await launchChromium();
      page = await browser.newPage();
      page.setDefaultTimeout(20_000);
      page.on('console', (message) => message.type() === 'error' && pageErrors.push(message.text()));
      page.on('pageerror', (error) => pageErrors.push(error.message));
    }, 90_000);
    afterAll(async () => {
      await browser?.close();
      await stack?.close();
      await new Promise((resolve) => pages?.close(resolve));
    });

    const textsOf = (role: string) =>
      page.locator(`[data-role=${role}]`).evaluateAll((items) =>
        items.map((item) =>
          Array.from(item.querySelectorAll('p'))
            .map((p: any) => p.textContent)
            .join(''),
        ),
      );
    const assistantTextsAre = (expected: string[]) =>
      page
        .waitForFunction((texts) => {
          const shown = Array.from(document.querySelectorAll('[data-role=assistant]')).map((item: any) =>
            Array.from(item.querySelectorAll('p'))
              .map((p: any) => p.textContent)
              .join(''),
          );
          return JSON.stringify(shown) === JSON.stringify(texts);
        }, expected)
        .catch(async (error: Error) => {
          throw new Error(`${error.message}\nthe page showed: ${JSON.stringify(await textsOf('assistant'))}; its errors: ${JSON.stringify(pageErrors)}`);
        });
    const send = async (text: string) => {
      await page.fill('input[name=text]', text);
      await page.click('button[type=submit]:enabled');
    };

    it('chats, shows the whole history after a reload, and stops a turn, all across origins', async () => {
      const chatId = `cross-origin-${Date.now()}`;
      const { token } = (await api.post('/v1/session-tokens', {})).body;
      await page.goto(`${pageOrigin}/?chat=${chatId}&token=${token}`);
      const asked = [`first ${scripted({ text: 'First answer.' })}`, `second ${scripted({ text: 'Second answer.' })}`];
      await send(asked[0]!);
      await assistantTextsAre(['First answer.']);
      await send(asked[1]!);
      await assistantTextsAre(['First answer.', 'Second answer.']);

      // The history comes from GET /api/chat/:id/messages, on the API's origin.
      await page.reload();
      await assistantTextsAre(['First answer.', 'Second answer.']);
      expect(await textsOf('user')).toEqual(asked);

      // Stop: POST /v1/turns/:id/cancel, on the API's origin.
      await send(scripted({ tokens: 3_000, tokenDelayMs: 10 }));
      await page.getByRole('button', { name: 'Stop' }).click();
      await page.waitForSelector('[data-role=assistant] em');
      await page.waitForSelector('button[type=submit]:enabled');
      const stopped = (await api.get(`/api/chat/${chatId}/messages`)).body.at(-1);
      expect(stopped.metadata).toEqual({ turnStatus: 'cancelled' });
      expect((await api.get(`/v1/turns/${stopped.id}`)).body.status).toBe('cancelled');

      // Marked stopped after a reload too, the earlier turns as they were.
      await page.reload();
      await page.waitForSelector('[data-role=assistant] em');
      expect((await textsOf('assistant')).slice(0, 2)).toEqual(['First answer.', 'Second answer.']);
      expect(await page.locator('[data-role=assistant] em').count()).toBe(1);
      expect(pageErrors).toEqual([]);
    });
  });
});

/** The `useChat` guide's component (docs/guides/use-chat.md), as a developer copies it, pointed at this API. */
async function readmeChatComponent(apiUrl: string): Promise<string> {
  const readme = await readFile(path.join(ROOT, 'docs/guides/use-chat.md'), 'utf8');
  const code = /```tsx\n([\s\S]*?)```/.exec(readme.slice(readme.indexOf('**`useChat` (AI SDK 6 or 7) against Switchyard.**')))?.[1];
  if (!code) throw new Error("docs/guides/use-chat.md's useChat paragraph has no tsx block");
  const pointed = code.replace("const API = 'http://127.0.0.1:3000';", `const API = '${apiUrl}';`);
  if (pointed === code) throw new Error("docs/guides/use-chat.md's useChat component no longer sets const API = 'http://127.0.0.1:3000'");
  return pointed;
}
