import { chromium, type Browser } from 'playwright-core';
import { installPackedClient, type PackedClientProject } from '../support/packed-client';
import { describeNeeding, missingProgram } from '../support/required-programs';
import { startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';

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
