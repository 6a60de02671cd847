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

const ROOT = path.join(__dirname, '..', '..');
const GUIDE = 'docs/guides/assistant-ui.md';

/**
 * The assistant-ui guide's component (docs/guides/assistant-ui.md) as a developer copies it,
 * bundled with React and served from an origin of its own, in Chromium against a started service.
 */
describeNeeding(CHROMIUM_MISSING, 'assistant-ui on another origin, in a browser', () => {
  let pages: http.Server;
  let pageOrigin: string;
  let stack: TestStack;
  let browser: Browser;
  let page: Page;
  let apiKey: string;
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
    ({ apiKey } = await stack.createUser('assistant-ui'));
    const sourceDir = await mkdtemp(path.join(os.tmpdir(), 'assistant-ui-app-'));
    await writeFile(path.join(sourceDir, 'chat-app.tsx'), await guideComponent(stack.url));
    await writeFile(
      path.join(sourceDir, 'main.tsx'),
      [
        "import { createRoot } from 'react-dom/client';",
        "import { ChatApp } from './chat-app';",
        "createRoot(document.getElementById('root')!).render(<ChatApp sessionToken={new URLSearchParams(location.search).get('token')!} />);",
      ].join('\n'),
    );
    await bundleReactPage(path.join(sourceDir, 'main.tsx'), path.join(sourceDir, 'app.js'), [path.join(ROOT, 'node_modules')]);
    files.set('/', { type: 'text/html', body: '<!doctype html><div id="root"></div><script type="module" src="/app.js"></script>' });
    files.set('/app.js', { type: 'text/javascript', body: await readFile(path.join(sourceDir, 'app.js')) });
    files.set('/favicon.ico', { type: 'image/x-icon', body: '' });

    browser = await launchChromium();
    page = await browser.newPage();
    page.setDefaultTimeout(20_000);
    page.on('console', (message) => message.type() === 'error' && pageErrors.push(message.text()));
    page.on('pageerror', (error) => pageErrors.push(error.message));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
    await new Promise((resolve) => pages?.close(resolve));
  });

  const assistantTexts = () => page.locator('[data-role=assistant]').allTextContents();
  const send = async (text: string) => {
    await page.fill('[name=text]', text);
    await page.getByRole('button', { name: 'Send' }).click();
  };

  it('streams two answers of one conversation, kept by Switchyard under the thread id', async () => {
    const api = apiClient(stack.url, apiKey);
    const { token } = (await api.post('/v1/session-tokens', {})).body;
    await page.goto(`${pageOrigin}/?token=${token}`);
    await send(`first ${scripted({ text: 'First answer.' })}`);
    await page.waitForFunction(
      () =>
        (globalThis as any).document.querySelectorAll('[data-role=assistant]').length === 1 &&
        (globalThis as any).document.querySelector('[data-role=assistant]').textContent === 'First answer.',
    );
    await send(`second ${scripted({ text: 'Second answer.' })}`);
    await page.waitForFunction(
      () =>
        Array.from((globalThis as any).document.querySelectorAll('[data-role=assistant]'))
          .map((item: any) => item.textContent)
          .join('|') === 'First answer.|Second answer.',
    );
    expect(await assistantTexts()).toEqual(['First answer.', 'Second answer.']);

    // One conversation holds both turns: the thread's id is its externalId.
    const conversations = (await api.get('/v1/conversations')).body.data;
    expect(conversations).toHaveLength(1);
    const messages = (await api.get(`/api/chat/${encodeURIComponent(conversations[0].externalId)}/messages`)).body;
    expect(messages.filter((message: any) => message.role === 'assistant').map((message: any) => message.metadata.turnStatus)).toEqual(['completed', 'completed']);
    expect(pageErrors).toEqual([]);
  }, 60_000);
});

/** The guide's component, pointed at this API. */
async function guideComponent(apiUrl: string): Promise<string> {
  const guide = await readFile(path.join(ROOT, GUIDE), 'utf8');
  const code = /```tsx\n([\s\S]*?)```/.exec(guide)?.[1];
  if (!code) throw new Error(`${GUIDE} has no tsx block`);
  const pointed = code.replace("const API = 'http://127.0.0.1:3000';", `const API = '${apiUrl}';`);
  if (pointed === code) throw new Error(`${GUIDE}'s component no longer sets const API = 'http://127.0.0.1:3000'`);
  return pointed;
}
