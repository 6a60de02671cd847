import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { installPackedClient, type PackedClientProject } from '../support/packed-client';
import { describeNeeding, missingProgram } from '../support/required-programs';
import { scripted, startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const CHROMIUM_MISSING = missingProgram(CHROMIUM, 'apt-get install -y --no-install-recommends chromium (bash .ci/run installs it when missing), or set CHROMIUM_PATH', 'Chromium');
/** As the machine's notes say: without these, Chromium tries the network at every start. */
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/**
 * A page's entry, bundled from a project that installed the packed @switchyard/client. A session
 * token follows conversations; the API key (the test's) makes them and posts turns.
 */
const PAGE_ENTRY = `
import { SwitchyardClient } from '@switchyard/client';

window.subscribeTo = async (baseUrl, token, conversationId) => {
  const client = new SwitchyardClient({ baseUrl, token }); // the browser's own WebSocket
  const subscription = client.subscribe(conversationId);
  await subscription.ready;
  window.followTurn = async (turnId) => {
    const view = await subscription.followTurn(turnId);
    client.close();
    return { status: view.status, text: view.text };
  };
};
`;

/** @switchyard/client installed from its tarball elsewhere, bundled by esbuild, run in Chromium against a real stack. */
describeNeeding(CHROMIUM_MISSING, 'the client package in a browser', () => {
  let project: PackedClientProject;
  let harness: ToolTurnHarness;
  let browser: Browser;

  beforeAll(async () => {
    [project, harness, browser] = await Promise.all([installPackedClient([]), startToolTurnHarness(), chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })]);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await harness?.close();
    await project?.remove();
  });

  it("follows a turn to its text with a session token, from the package's browser bundle", async () => {
    const bundle = await project.bundle(PAGE_ENTRY);
    const { token } = (await harness.api.post('/v1/session-tokens', {})).body;
    const page = await browser.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    // A page of the API's own origin (the websocket and fetches need no CORS), with the bundle in it.
    await page.goto(`${harness.stack.url}/healthz`);
    await page.addScriptTag({ content: bundle, type: 'module' });
    await page.waitForFunction(() => typeof (globalThis as any).subscribeTo === 'function');
    const conversationId = await harness.newConversation();
    await page.evaluate(([url, sessionToken, id]) => (globalThis as any).subscribeTo(url, sessionToken, id), [harness.stack.url, token, conversationId] as const);
    const text = 'Hello from a bundle in Chromium.';
    const { turnId } = await harness.postTurn(conversationId, { text, tokenDelayMs: 5 });
    const view = await page.evaluate((id) => (globalThis as any).followTurn(id), turnId);
    expect({ view, pageErrors }).toEqual({ view: { status: 'completed', text }, pageErrors: [] });
  }, 60_000);
});

/**
 * A page on another origin, as a front end with a backend of its own: its token provider asks the
 * backend (here the test, through an exposed function) for a session token, and with it the page
 * makes a conversation, posts a turn and follows it, all across origins (ALLOWED_ORIGINS).
 */
const CROSS_ORIGIN_ENTRY = `
import { SwitchyardClient } from '@switchyard/client';

window.chatFromPage = async (baseUrl, content) => {
  const client = new SwitchyardClient({ baseUrl, token: () => window.mintSessionToken() });
  const conversation = await client.createConversation({ title: 'made by a page' });
  const subscription = client.subscribe(conversation.id);
  await subscription.ready;
  const { turnId } = await client.sendTurn(conversation.id, content);
  const view = await subscription.followTurn(turnId);
  // A route that needs the API key: its 403 is readable, not a failed fetch.
  const refused = await client.http('GET', '/v1/tools').catch((error) => ({ status: error.status, code: error.code, message: error.message }));
  client.close();
  return { conversationId: conversation.id, status: view.status, text: view.text, refused };
};
`;

describeNeeding(CHROMIUM_MISSING, 'the client package in a page on another origin', () => {
  let project: PackedClientProject;
  let harness: ToolTurnHarness;
  let browser: Browser;
  let pages: http.Server;
  let pageOrigin: string;

  beforeAll(async () => {
    pages = http.createServer((_req, res) => void res.writeHead(200, { 'content-type': 'text/html' }).end('<!doctype html><title>app</title>'));
    await new Promise<void>((resolve) => pages.listen(0, '127.0.0.1', resolve));
    pageOrigin = `http://127.0.0.1:${(pages.address() as AddressInfo).port}`;
    [project, harness, browser] = await Promise.all([
      installPackedClient([]),
      startToolTurnHarness({ env: { ALLOWED_ORIGINS: pageOrigin } }),
      chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS }),
    ]);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
    await harness?.close();
    await project?.remove();
    await new Promise((resolve) => pages?.close(resolve));
  });

  it('creates a conversation, sends a turn and follows it with a session token from its provider, and reads a 403 of a route that needs the key', async () => {
    const bundle = await project.bundle(CROSS_ORIGIN_ENTRY);
    const page = await browser.newPage();
    const pageErrors: string[] = [];
    page.on('pageerror', (error) => pageErrors.push(error.message));
    let minted = 0;
    await page.exposeFunction('mintSessionToken', async () => {
      minted++;
      return (await harness.api.post('/v1/session-tokens', {})).body.token as string;
    });
    await page.goto(`${pageOrigin}/`);
    await page.addScriptTag({ content: bundle, type: 'module' });
    await page.waitForFunction(() => typeof (globalThis as any).chatFromPage === 'function');
    const text = 'Answered across origins.';
    const outcome = await page.evaluate(([url, content]) => (globalThis as any).chatFromPage(url, content), [harness.stack.url, scripted({ text })] as const);
    expect({ ...outcome, conversationId: undefined, pageErrors }).toEqual({
      conversationId: undefined,
      status: 'completed',
      text,
      refused: { status: 403, code: 'forbidden', message: expect.stringContaining('this route needs the API key') },
      pageErrors: [],
    });
    expect(minted).toBe(1);
    // The conversation is the user's, as if the key had made it.
    expect((await harness.api.get(`/v1/conversations/${outcome.conversationId}`)).body.title).toBe('made by a page');
  }, 60_000);
});
