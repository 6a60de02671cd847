import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { copyFile, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { CHROMIUM_MISSING, launchChromium } from '../support/chromium';
import { apiClient } from '../support/http';
import { closedPort } from '../support/ports';
import { describeNeeding } from '../support/required-programs';
import { scripted } from '../support/scripted';
import { startTestStack, type TestStack } from '../support/stack';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';

const ROOT = path.join(__dirname, '..', '..');
const EXAMPLE = path.join(ROOT, 'examples', 'use-chat-app');
const AI_SDK_7 = path.join(ROOT, 'test', 'fixtures', 'ai-sdk-7');

/**
 * Where serve.js runs from for each AI SDK major: the example itself (the root's ai 6), or a copy
 * inside test/fixtures/ai-sdk-7, whose node_modules (ai 7, @ai-sdk/react 4) the bundle then finds
 * first, React and esbuild still coming from the root.
 */
const AI_SDKS = [
  { major: 6, appDir: async () => EXAMPLE },
  {
    major: 7,
    appDir: async () => {
      const dir = await mkdtemp(path.join(AI_SDK_7, '.app-'));
      for (const file of ['chat.tsx', 'main.tsx', 'serve.js']) await copyFile(path.join(EXAMPLE, file), path.join(dir, file));
      // Only what serve.js needs of the example's manifest (its ES module syntax), without a second package name.
      await writeFile(path.join(dir, 'package.json'), '{ "type": "module" }\n');
      return dir;
    },
  },
];

/**
 * examples/use-chat-app as its README runs it: its own server (`node serve.js`, bundling the app
 * and minting the page's session token) on another origin than the API, in Chromium, with each AI
 * SDK major. A turn calls the page's client tool, then an approval-gated tool the person approves in the page.
 */
describe.each(AI_SDKS)('AI SDK $major', ({ major, appDir: makeAppDir }) => {
  describeNeeding(CHROMIUM_MISSING, 'examples/use-chat-app in a browser', () => {
    let appDir: string;
    let proxy: TcpProxy;
    let stack: TestStack;
    let app: ChildProcess;
    let appUrl: string;
    let browser: Browser;
    let page: Page;
    let apiKey: string;
    const pageErrors: string[] = [];

    beforeAll(async () => {
      const port = await closedPort();
      appUrl = `http://127.0.0.1:${port}`;
      stack = await startTestStack({ env: { ALLOWED_ORIGINS: appUrl, TOOLS_DIR: path.join(ROOT, 'examples', 'tools'), APPROVAL_REQUIRED_TOOLS: 'calculator' } });
      ({ apiKey } = await stack.createUser('use-chat-example'));
      // The page reaches the API through a proxy, so that a test can drop its connections mid-stream.
      proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(stack.url).port) });
      appDir = await makeAppDir();
      app = spawn(process.execPath, [path.join(appDir, 'serve.js')], {
        env: { PATH: process.env.PATH ?? '', PORT: String(port), SWITCHYARD_URL: proxy.urlFor(stack.url).replace(/\/$/, ''), SWITCHYARD_API_KEY: apiKey },
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      let printed = '';
      await new Promise<void>((resolve, reject) => {
        app.stdout!.on('data', (chunk: Buffer) => {
          printed += chunk.toString();
          if (printed.includes('listening on')) resolve();
        });
        app.once('exit', (code) => reject(new Error(`serve.js exited (${code}) before listening`)));
      });
      // The page runs the major this block names: the bundle carries the resolved `ai`'s version string.
      const { version } = JSON.parse(await readFile(require.resolve('ai/package.json', { paths: [appDir] }), 'utf8')) as { version: string };
      expect(version.split('.')[0]).toBe(String(major));
      expect(await (await fetch(`${appUrl}/app.js`)).text()).toContain(`"${version}"`);
      browser = await launchChromium();
      page = await browser.newPage();
      page.setDefaultTimeout(20_000);
      page.on('console', (message) => message.type() === 'error' && pageErrors.push(message.text()));
      page.on('pageerror', (error) => pageErrors.push(error.message));
    }, 90_000);
    afterAll(async () => {
      await browser?.close();
      if (app && app.exitCode === null) {
        app.kill();
        await once(app, 'exit');
      }
      await proxy?.close();
      await stack?.close();
      if (appDir && appDir !== EXAMPLE) await rm(appDir, { recursive: true, force: true });
    });

    it('runs the client tool in the page and the gated tool once the person approves, in one turn', async () => {
      const chatId = `use-chat-example-${Date.now()}`;
      await page.goto(`${appUrl}/?chat=${chatId}`);
      const question = scripted({
        steps: [
          { toolCalls: [{ name: 'browser_timezone' }] },
          { toolCalls: [{ name: 'calculator', arguments: { expression: '12*7' } }] },
          { text: 'It is 84, in your time zone.' },
        ],
      });
      await page.fill('input[name=text]', question);
      await page.click('button[type=submit]:enabled');

      // The browser answered its tool by itself; the calculator waits for the person.
      await page.waitForSelector('[data-tool=browser_timezone][data-state=output-available]');
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.waitForFunction(() =>
        Array.from((globalThis as any).document.querySelectorAll('[data-role=assistant] p')).some((p: any) => p.textContent === 'It is 84, in your time zone.'),
      );
      expect(await page.locator('[data-tool=calculator][data-state=output-available]').textContent()).toContain('84');

      // One turn, completed, both calls in it: the time zone as the page's browser gave it.
      const api = apiClient(stack.url, apiKey);
      const assistant = (await api.get(`/api/chat/${chatId}/messages`)).body.at(-1);
      expect(assistant.metadata).toEqual({ turnStatus: 'completed' });
      const turn = (await api.get(`/v1/turns/${assistant.id}`)).body;
      expect(turn.status).toBe('completed');
      const timezone = assistant.parts.find((part: any) => part.type === 'tool-browser_timezone');
      expect(timezone.output).toEqual({ timeZone: expect.any(String) });
      expect(pageErrors).toEqual([]);
    }, 60_000);

    // The replay takes the partial message's place with both majors: with AI SDK 6 only because the page hands useChat a Chat it made.
    it('picks a turn up again after its connection dropped mid-stream, and shows it whole', async () => {
      const chatId = `use-chat-example-drop-${Date.now()}`;
      await page.goto(`${appUrl}/?chat=${chatId}`);
      await page.fill('input[name=text]', scripted({ tokens: 300, tokenDelayMs: 10 }));
      await page.click('button[type=submit]:enabled');
      await page.waitForSelector('[data-role=assistant] p');
      // Dropped connections fail the open stream with `TypeError: network error`; the page picks the turn up again.
      proxy.cut();
      proxy.restore();
      // Send is enabled again only once a stream ended well (status `ready`; a failed one is `error`).
      await page.waitForSelector('button[type=submit]:enabled');
      const assistant = (await apiClient(stack.url, apiKey).get(`/api/chat/${chatId}/messages`)).body.at(-1);
      expect(assistant.metadata).toEqual({ turnStatus: 'completed' });
      const stored = assistant.parts
        .filter((part: any) => part.type === 'text')
        .map((part: any) => part.text)
        .join('');
      expect(await page.locator('[data-role=assistant] p').allTextContents()).toEqual([stored]);
      expect(await page.locator('[data-role=assistant]').count()).toBe(1);
    }, 60_000);
  });
});
