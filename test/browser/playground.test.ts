import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { buildPlayground } from '../../src/playground/build';
import { startScriptedModel, type ScriptedModel } from '../../src/scripted-model/scripted-model-server';
import { tokenize } from '../../src/scripted-model/tokenize';
import { followBatchEvents } from '../support/batch-events';
import { CHROMIUM_MISSING, launchChromium } from '../support/chromium';
import { describeNeeding } from '../support/required-programs';
import { transferTool } from '../support/approval-tools';
import { startToolHttpServer, type ToolHttpServer } from '../support/tool-servers';
import { scripted, startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';

/** What the callbacks passed to `page.evaluate` see; they run in the page, not here. */
declare const document: any;
declare const sessionStorage: any;

const OUTPUT_DIR = path.join(__dirname, '..', '..', 'test-output', 'browser');
/** USD per million tokens of the models file's default model, `scripted`; its model `free` has no price. */
const PRICE = { input: 3, cachedInput: 0.3, output: 15 };

/** The playground at `/` in headless Chromium: what a person sees, driven as they would. */
describeNeeding(CHROMIUM_MISSING, 'the playground in a browser', () => {
  let harness: ToolTurnHarness;
  let model: ScriptedModel;
  let tools: ToolHttpServer;
  let browser: Browser;
  let page: Page;
  /** While set, the weather tool answers only once it settles. */
  let weatherGate: Promise<void> | undefined;
  /** What the page logged as errors: part of a failure's message. */
  const pageErrors: string[] = [];

  beforeAll(async () => {
    tools = await startToolHttpServer();
    tools.route('/weather', (request) => ({
      ...(weatherGate ? { until: weatherGate } : { delayMs: 700 }),
      body: { city: (request.body as { city: string }).city, tempC: 21 },
    }));
    tools.route('/broken', { status: 500, body: { error: 'the backend is down' }, delayMs: 50 });
    tools.route('/transfer', (request) => ({ body: { done: true, sent: request.body } }));
    const playgroundDir = await mkdtemp(path.join(os.tmpdir(), 'playground-'));
    await buildPlayground(playgroundDir);
    // A models file, as a deployment prices its models: both names are the scripted model.
    model = await startScriptedModel();
    const modelsFile = path.join(playgroundDir, 'models.json');
    const target = { provider: 'local', model: 'scripted' };
    await writeFile(
      modelsFile,
      JSON.stringify({
        providers: { local: { baseURL: model.url } },
        models: { scripted: { targets: [target], price: PRICE }, free: { targets: [target] } },
        defaultModel: 'scripted',
      }),
    );
    const exampleTools = JSON.parse(await readFile(path.join(__dirname, '..', '..', 'examples', 'tools', 'browser.json'), 'utf8'));
    harness = await startToolTurnHarness({
      toolFiles: {
        'browser.json': exampleTools,
        'weather.json': { name: 'weather', description: 'The weather in a city', url: `${tools.url}/weather`, fields: [{ name: 'city', required: true }] },
        'broken.json': { name: 'broken', description: 'Always fails', url: `${tools.url}/broken`, retries: 0, fields: [{ name: 'n', type: 'integer' }] },
        'transfer.json': transferTool(tools.url),
      },
      env: { PLAYGROUND_DIR: playgroundDir, MODELS_FILE: modelsFile },
      scripted: model,
    });
    browser = await launchChromium();
    page = await browser.newPage({ viewport: { width: 1100, height: 760 } });
    page.setDefaultTimeout(20_000);
    page.on('console', (message) => message.type() === 'error' && pageErrors.push(message.text()));
    page.on('pageerror', (error) => pageErrors.push(error.message));
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await harness?.close();
    await model?.close();
    await tools?.close();
  });

  const assistantTexts = () =>
    page.locator('[data-testid=assistant-message]').evaluateAll((items) =>
      items.map((item) =>
        Array.from(item.querySelectorAll(':scope > p'))
          .map((p: any) => p.textContent)
          .join(''),
      ),
    );
  /** Waits until the last assistant message shows exactly `expected` as its text; a timeout says what the page showed instead. */
  const lastAnswerIs = async (expected: string) => {
    try {
      await page.waitForFunction((text) => {
        const messages = document.querySelectorAll('[data-testid=assistant-message]');
        const last = messages[messages.length - 1];
        return (
          last !== undefined &&
          Array.from(last.querySelectorAll(':scope > p'))
            .map((p: any) => p.textContent)
            .join('') === text
        );
      }, expected);
    } catch (error) {
      throw new Error(`the last answer never read ${JSON.stringify(expected)}; the page at ${page.url()} showed ${await describePage()}`, { cause: error });
    }
  };
  /** The chat as the page shows it (for a failure's message): statuses, cards, errors. */
  const describePage = async () =>
    JSON.stringify({
      statusLine: await page
        .locator('.status-line')
        .innerText()
        .catch(() => null),
      sendDisabled: await page
        .locator('[data-testid=send-button]')
        .isDisabled()
        .catch(() => null),
      cards: await page.locator('[data-testid=tool-card]').evaluateAll((cards) => cards.map((card: any) => `${card.dataset.tool}:${card.dataset.state}`)),
      answers: await assistantTexts(),
      pageErrors,
    });
  const send = async (text: string) => {
    await page.fill('[data-testid=message-input]', text);
    await page.click('[data-testid=send-button]');
  };

  /** Signed in (the key given once, when the page asks for it) in a chat of its own. */
  const freshChat = async () => {
    await page.goto(harness.stack.url);
    await page.waitForSelector('[data-testid=key-input], [data-testid=new-chat]');
    if ((await page.locator('[data-testid=key-input]').count()) > 0) {
      await page.fill('[data-testid=key-input]', harness.apiKey);
      await page.click('[data-testid=key-submit]');
    }
    await page.click('[data-testid=new-chat]');
  };

  it('takes a key, streams a turn with parallel tool calls as cards, shows running tools and disables send meanwhile', async () => {
    await page.goto(harness.stack.url);
    expect(await page.getAttribute('[data-testid=key-input]', 'placeholder')).toBe('sy_…');
    await page.fill('[data-testid=key-input]', harness.apiKey);
    await page.click('[data-testid=key-submit]');
    await page.click('[data-testid=new-chat]');
    expect(await page.evaluate(() => JSON.stringify(sessionStorage))).not.toContain(harness.apiKey);

    const scenario = {
      steps: [
        {
          text: 'Checking both cities.',
          toolCalls: [
            { name: 'weather', arguments: { city: 'Lisbon' } },
            { name: 'weather', arguments: { city: 'Porto' } },
          ],
        },
        { text: 'Both are 21 degrees.', tokenDelayMs: 20 },
      ],
    };
    // The tools run until the page has shown them running: a renderer starved for a while on a
    // busy machine would otherwise paint the phase's start and end at once.
    let release!: () => void;
    weatherGate = new Promise<void>((resolve) => (release = resolve));
    await send(`weather ${scripted(scenario)}`);
    await page.waitForSelector('[data-testid=send-button]:disabled');
    try {
      await page.waitForSelector('[data-testid=running-tools]').catch(async (error: Error) => {
        throw new Error(`${error.message}\nthe page showed: ${await describePage()}\nweather requests: ${tools.requests.filter((each) => each.path === '/weather').length}`);
      });
    } finally {
      release();
      weatherGate = undefined;
    }
    await page.waitForSelector('[data-testid=tool-card][data-state=output-available] >> nth=1');
    await lastAnswerIs('Checking both cities.Both are 21 degrees.');
    await page.waitForSelector('[data-testid=send-button]:enabled');
    expect(await page.locator('[data-testid=running-tools]').count()).toBe(0);
    const cards = await page.locator('[data-testid=tool-card]').allInnerTexts();
    expect(cards).toEqual([expect.stringMatching(/weather[\s\S]*Lisbon[\s\S]*tempC[\s\S]*1 attempt/), expect.stringMatching(/weather[\s\S]*Porto[\s\S]*tempC/)]);
    expect(await assistantTexts()).toEqual(['Checking both cities.Both are 21 degrees.']);
    expect(await page.locator('[data-testid=turn-mark][data-status=cancelled]').count()).toBe(0);
    await mkdir(OUTPUT_DIR, { recursive: true });
    await page.screenshot({ path: path.join(OUTPUT_DIR, 'playground.png') });
  });

  it('runs the client tool in the page, and the same answer continues the turn', async () => {
    await freshChat();
    await send(`where am I ${scripted({ steps: [{ toolCalls: [{ name: 'browser_timezone' }] }, { text: 'Noted your time zone.' }] })}`);
    await lastAnswerIs('Noted your time zone.');
    const card = page.locator('[data-testid=tool-card][data-tool=browser_timezone]');
    expect(await card.getAttribute('data-state')).toBe('output-available');
    expect(await card.innerText()).toMatch(/timeZone/);
    const conversation = (await harness.api.get('/v1/conversations')).body.data[0];
    const messages = (await harness.api.get(`/v1/conversations/${conversation.id}`)).body.messages;
    const answer = messages.find((message: any) => message.role === 'tool' && message.content.includes('timeZone'));
    expect(JSON.parse(answer.content)).toEqual({ timeZone: expect.any(String), locale: expect.any(String) });
  });

  it("runs the client tool of a later turn too, though its call is named call_0 like the first turn's", async () => {
    await freshChat();
    const scenario = (text: string) => scripted({ steps: [{ toolCalls: [{ name: 'browser_timezone' }] }, { text }] });
    await send(`where am I ${scenario('Noted once.')}`);
    await lastAnswerIs('Noted once.');
    await page.waitForSelector('[data-testid=send-button]:enabled');
    // The person travelled: the second answer differs from the first.
    await page.evaluate(() => {
      const resolvedOptions = Intl.DateTimeFormat.prototype.resolvedOptions;
      Intl.DateTimeFormat.prototype.resolvedOptions = function () {
        return { ...resolvedOptions.call(this), timeZone: 'Pacific/Auckland' };
      };
    });
    await send(`and now ${scenario('Noted twice.')}`);
    await lastAnswerIs('Noted twice.').catch(async (error: Error) => {
      throw new Error(`${error.message}\nthe page showed: ${await describePage()}`);
    });
    const conversation = (await harness.api.get('/v1/conversations')).body.data[0];
    const messages = (await harness.api.get(`/v1/conversations/${conversation.id}`)).body.messages;
    const answers = messages.filter((message: any) => message.role === 'tool');
    expect(answers.map((message: any) => message.toolCallId)).toEqual(['call_0', 'call_0']);
    expect(new Set(answers.map((message: any) => message.turnId)).size).toBe(2);
    const zones = answers.map((message: any) => JSON.parse(message.content).timeZone);
    expect(zones[0]).not.toBe('Pacific/Auckland');
    expect(zones[1]).toBe('Pacific/Auckland');
    // Each card shows its own turn's answer: the second one's did not overwrite the first.
    const cards = page.locator('[data-testid=tool-card][data-tool=browser_timezone]');
    expect(await cards.evaluateAll((each) => each.map((card: any) => card.dataset.state))).toEqual(['output-available', 'output-available']);
    const shown = await cards.locator('.result').allInnerTexts();
    expect(shown.map((text) => JSON.parse(text).timeZone)).toEqual(zones);
  });

  it('hides "Running tools…" once every card is done, also after two steps of client tools', async () => {
    // A resume request answered late (here: held 150 ms) used to attach to the new turn beside the send's
    // own stream: client tools answered twice, dozens of cards. A chat whose history ends in no open turn
    // must not ask at all.
    const resumeRequests: string[] = [];
    await page.route('**/api/chat/*/stream', async (route) => {
      resumeRequests.push(route.request().url());
      await new Promise((resolve) => setTimeout(resolve, 150));
      await route.continue();
    });
    await freshChat();
    const ending = Array.from({ length: 60 }, (_, i) => `end${i}`).join(' ');
    const browserTool = { toolCalls: [{ name: 'browser_timezone' }] };
    await send(scripted({ steps: [browserTool, browserTool, { text: ending, tokenDelayMs: 30 }] }));
    // The last step streams: every card is done while the turn still runs.
    await page
      .waitForFunction(() => (document.querySelector('[data-testid=assistant-message]:last-child')?.textContent ?? '').includes('end5'))
      .catch(async (error: Error) => {
        throw new Error(`${error.message}\nthe page showed: ${await describePage()}`);
      });
    expect(await page.locator('[data-testid=send-button]').isDisabled()).toBe(true);
    expect(await page.locator('[data-testid=tool-card]').evaluateAll((cards) => cards.map((card: any) => card.dataset.state))).toEqual(['output-available', 'output-available']);
    expect(await page.locator('[data-testid=running-tools]').count()).toBe(0);
    await lastAnswerIs(ending);
    expect(resumeRequests).toEqual([]);
    await page.unroute('**/api/chat/*/stream');
  });

  it('resumes the stream after a reload mid-turn, without duplicated text', async () => {
    await freshChat();
    const text = Array.from({ length: 120 }, (_, i) => `word${i}`).join(' ');
    await send(scripted({ text, tokenDelayMs: 20 }));
    await page.waitForFunction(() => (document.querySelector('[data-testid=assistant-message]:last-child p')?.textContent ?? '').includes('word10'));
    await page.reload();
    await lastAnswerIs(text);
    const texts = await assistantTexts();
    expect(texts.at(-1)).toBe(text);
    expect(texts.filter((each) => each.includes('word0 '))).toHaveLength(1);
    await page.waitForSelector('[data-testid=send-button]:enabled');
  });

  it('asks for approval on the card, still after a reload; Approve runs the call and the answer follows, Deny never runs it', async () => {
    const transfersTo = (to: string) => tools.requests.filter((request) => request.path === '/transfer' && (request.body as { to?: string })?.to === to);
    const lastCard = '[data-testid=assistant-message]:last-child [data-testid=tool-card][data-tool=transfer]';
    const transfer = (to: string, answer: string) => scripted({ steps: [{ toolCalls: [{ name: 'transfer', arguments: { to, amount: 5 } }] }, { text: answer }] });
    await freshChat();
    await send(transfer('ann', 'Sent 5 to ann.'));
    await page.waitForSelector(`${lastCard}[data-state=approval-requested] [data-testid=approve-button]`);
    await page.waitForSelector('[data-testid=send-button]:enabled');

    // The decision is the server's to wait for: a reload shows the same pending call.
    await page.reload();
    await page.waitForSelector(`${lastCard}[data-state=approval-requested] [data-testid=approve-button]`);
    expect(transfersTo('ann')).toHaveLength(0);
    await page.click(`${lastCard} [data-testid=approve-button]`);
    await lastAnswerIs('Sent 5 to ann.').catch(async (error: Error) => {
      throw new Error(`${error.message}\nthe page showed: ${await describePage()}`);
    });
    await page.waitForSelector(`${lastCard}[data-state=output-available]`);
    expect(await page.locator(`${lastCard} .result`).innerText()).toContain('"done": true');
    expect(transfersTo('ann')).toHaveLength(1);

    await send(transfer('bob', 'I did not send it.'));
    await page.click(`${lastCard}[data-state=approval-requested] [data-testid=deny-button]`);
    await lastAnswerIs('I did not send it.');
    await page.waitForSelector(`${lastCard}[data-state=output-denied]`);
    expect(await page.locator(`${lastCard} [data-testid=approve-button]`).count()).toBe(0);
    expect(transfersTo('bob')).toHaveLength(0);
    expect(await assistantTexts()).toHaveLength(2);
  });

  it('stops a running turn with the stop button', async () => {
    await freshChat();
    await send(scripted({ tokens: 3_000, tokenDelayMs: 10 }));
    await page.waitForSelector('[data-testid=stop-button]:enabled');
    expect(await page.locator('[data-testid=turn-mark][data-status=cancelled]').count()).toBe(0);
    await page.click('[data-testid=stop-button]');
    await page.waitForSelector('[data-testid=send-button]:enabled');
    // The stream ended with `abort`: the turn's message says it was stopped.
    await page.waitForSelector('[data-testid=assistant-message]:last-child [data-testid=turn-mark][data-status=cancelled]');
    const conversations = (await harness.api.get('/v1/conversations')).body.data;
    const turns = await harness.stack.resources.turns.activeTurns(conversations[0].id);
    expect(turns).toEqual([]);
  });

  it('shows a chat after a reload as it was: server tools labelled server with attempts and time, a stopped turn marked', async () => {
    await freshChat();
    await send(scripted({ steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }] }, { text: 'It is 42.' }] }));
    await lastAnswerIs('It is 42.');
    await send(scripted({ tokens: 3_000, tokenDelayMs: 10 }));
    await page.waitForSelector('[data-testid=stop-button]:enabled');
    await page.click('[data-testid=stop-button]');
    await page.waitForSelector('[data-testid=turn-mark][data-status=cancelled]');

    await page.reload();
    await page.waitForSelector('[data-testid=turn-mark][data-status=cancelled]');
    expect(await page.locator('[data-testid=turn-mark]').count()).toBe(1);
    const card = page.locator('[data-testid=tool-card][data-tool=calculator]');
    expect(await card.getAttribute('data-state')).toBe('output-available');
    expect(await card.locator('.where').innerText()).toBe('server');
    expect(await card.locator('footer').innerText()).toMatch(/^1 attempt · \d+ ms$/);
    expect((await assistantTexts())[0]).toBe('It is 42.');
  });

  it('keeps the paragraph and reasoning a stopped turn had shown, also after a reload', async () => {
    await freshChat();
    const reasoning = 'Thinking it over.';
    const paragraph = 'A first paragraph, read before the stop.';
    await send(scripted({ reasoning, text: `${paragraph} More was coming.`, stallAfterTokens: tokenize(reasoning).length + tokenize(paragraph).length }));
    await lastAnswerIs(`${reasoning}${paragraph}`);
    await page.click('[data-testid=stop-button]');
    await page.waitForSelector('[data-testid=assistant-message]:last-child [data-testid=turn-mark][data-status=cancelled]');

    await page.reload();
    await page.waitForSelector('[data-testid=assistant-message]:last-child [data-testid=turn-mark][data-status=cancelled]');
    await lastAnswerIs(`${reasoning}${paragraph}`);
    expect(await page.locator('[data-testid=assistant-message]:last-child p.reasoning').innerText()).toBe(reasoning);
  });

  it("fills a tool card's arguments in while they stream", async () => {
    await freshChat();
    const city = 'Llanfairpwllgwyngyll';
    await send(scripted({ steps: [{ toolCalls: [{ name: 'weather', arguments: { city } }], argumentChunkChars: 2, tokenDelayMs: 150 }, { text: 'Mild.' }] }));
    // Part of the arguments on the card, the call not yet complete.
    const partial = await page.waitForFunction(() => {
      const card = document.querySelector('[data-testid=tool-card][data-tool=weather][data-state=input-streaming]');
      const args = card?.querySelector('.args')?.textContent ?? '';
      return args.includes('Llan') ? args : false;
    });
    expect(await partial.jsonValue()).not.toContain(city);
    await lastAnswerIs('Mild.');
    const card = page.locator('[data-testid=tool-card][data-tool=weather]').last();
    expect(await card.getAttribute('data-state')).toBe('output-available');
    expect(await card.locator('.args').innerText()).toContain(city);
  });

  it('shows a failing tool as an error card with its error, attempts and duration', async () => {
    await freshChat();
    await send(scripted({ steps: [{ toolCalls: [{ name: 'broken', arguments: { n: 1 } }] }, { text: 'It failed.' }] }));
    await lastAnswerIs('It failed.');
    const card = page.locator('[data-testid=tool-card][data-tool=broken]').last();
    expect(await card.getAttribute('data-state')).toBe('output-error');
    expect(await card.locator('.badge').innerText()).toBe('failed');
    expect(await card.locator('.failure').innerText()).toBe('http_error: {"error":"the backend is down"}');
    expect(await card.locator('footer').innerText()).toMatch(/^1 attempt · \d+ ms$/);
  });

  it('opens a conversation from the list with its messages', async () => {
    await freshChat();
    const marker = `open-me-${Date.now()}`;
    await send(`${marker} ${scripted({ text: 'Opened again.' })}`);
    await lastAnswerIs('Opened again.');
    // The list is read again once the turn ends: then this chat is its first item.
    await page.waitForFunction(() => document.querySelector('[data-testid=conversation-item]')?.classList.contains('current') === true);
    await page.click('[data-testid=new-chat]');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=assistant-message]').length === 0);
    // The newest conversation is listed first.
    await page.locator('[data-testid=conversation-item]').first().click();
    await lastAnswerIs('Opened again.');
    expect(await page.locator('[data-testid=user-message]').last().innerText()).toContain(marker);
  });

  it('sends with Enter, and starts a new line with Shift+Enter', async () => {
    await freshChat();
    const input = page.locator('[data-testid=message-input]');
    const text = `first line\nsecond line ${scripted({ text: 'Two lines read.' })}`;
    await input.click();
    await page.keyboard.type('first line');
    await page.keyboard.press('Shift+Enter');
    await page.keyboard.type(text.split('\n')[1]!);
    expect(await input.inputValue()).toBe(text);
    expect(await page.locator('[data-testid=user-message]').count()).toBe(0);
    await page.keyboard.press('Enter');
    await lastAnswerIs('Two lines read.');
    expect(await page.locator('[data-testid=user-message]').last().locator(':scope > p').innerText()).toBe(text);
    expect(await input.inputValue()).toBe('');
  });

  it('regenerates the last answer and edits a question: the page shows the path, also after a reload', async () => {
    await freshChat();
    const userTexts = () => page.locator('[data-testid=user-message]').evaluateAll((items) => items.map((item: any) => item.querySelector(':scope > p')?.textContent));
    // The scripted model answers the same request differently on its second arrival.
    await send(`first ${scripted({ attempts: [{ text: 'First try.' }, { text: 'Second try.' }] })}`);
    await lastAnswerIs('First try.');
    await page.click('[data-testid=regenerate-button]');
    await lastAnswerIs('Second try.');
    expect(await assistantTexts()).toEqual(['Second try.']);

    await send(`second ${scripted({ text: 'Answer two.' })}`);
    await lastAnswerIs('Answer two.');
    // Only the last answer can be regenerated; every question can be edited.
    expect(await page.locator('[data-testid=regenerate-button]').count()).toBe(1);
    expect(await page.locator('[data-testid=edit-button]').count()).toBe(2);
    const edited = `edited ${scripted({ text: 'Edited answer.' })}`;
    await page.locator('[data-testid=user-message]').first().locator('[data-testid=edit-button]').click();
    await page.fill('[data-testid=edit-input]', edited);
    await page.click('[data-testid=edit-save]');
    await lastAnswerIs('Edited answer.');
    expect([await userTexts(), await assistantTexts()]).toEqual([[edited], ['Edited answer.']]);

    // The stored history is the same path.
    await page.reload();
    await lastAnswerIs('Edited answer.');
    expect([await userTexts(), await assistantTexts()]).toEqual([[edited], ['Edited answer.']]);
    expect(pageErrors).toEqual([]);
  });

  it('keeps the newest text in view as it streams, and stays where the person scrolled up to', async () => {
    await freshChat();
    await send(scripted({ tokens: 5_000, tokenDelayMs: 5 }));
    /** How far the list is from showing its end, and how far it scrolled. */
    const position = () =>
      page.evaluate(() => {
        const list = document.querySelector('[data-testid=messages]');
        return { scrollTop: list.scrollTop, fromBottom: list.scrollHeight - list.scrollTop - list.clientHeight, text: list.textContent.length };
      });
    const followingFrom = (scrollTop: number) =>
      page.waitForFunction((above) => {
        const list = document.querySelector('[data-testid=messages]');
        return list.scrollTop > above && list.scrollHeight - list.scrollTop - list.clientHeight <= 2;
      }, scrollTop);
    // The answer outgrows the list, and the list follows its end as it grows.
    await followingFrom(0);
    await followingFrom((await position()).scrollTop + 100);

    await page.hover('[data-testid=messages]');
    await page.mouse.wheel(0, -300);
    await page.waitForFunction(() => {
      const list = document.querySelector('[data-testid=messages]');
      return list.scrollHeight - list.scrollTop - list.clientHeight > 200;
    });
    const scrolledUp = await position();
    await page.waitForFunction((length) => document.querySelector('[data-testid=messages]').textContent.length > length + 2_000, scrolledUp.text);
    expect((await position()).scrollTop).toBe(scrolledUp.scrollTop);

    // "Newest" takes the person back to the end, which is followed again.
    await page.click('[data-testid=to-newest]');
    await followingFrom(scrolledUp.scrollTop);
    await followingFrom((await position()).scrollTop + 100);
    await page.click('[data-testid=stop-button]');
    await page.waitForSelector('[data-testid=send-button]:enabled');
  });

  it("lists the person's chats and REST conversations a page at a time, never a batch's items, and shows a REST one read-only", async () => {
    const rest = await harness.runTurn({ text: 'Answered over REST.' }, { conversation: { title: 'Made over REST' } });
    for (let i = 0; i < 25; i++) await harness.newConversation({ title: `REST ${i}` });
    // Sixty batch items, newer than every chat: each one a conversation.
    const items = Array.from({ length: 60 }, (_, i) => ({ messages: [scripted({ text: `item ${i}` })] }));
    const batch = (await harness.api.post('/v1/batches', { items, concurrency: 8 })).body;
    const progress = await followBatchEvents(harness.stack.url, harness.apiKey, batch.id);
    expect(await progress.finished().finally(() => progress.close())).toMatchObject({ counts: { succeeded: 60 } });
    const own = (await harness.api.get('/v1/conversations?source=chat,api&limit=100')).body.data.map((conversation: { id: string }) => conversation.id);
    expect(own.length).toBeGreaterThan(25);

    await page.reload();
    const listed = () => page.locator('[data-testid=conversation-item]').evaluateAll((items) => items.map((item: any) => item.dataset.id));
    await page.waitForSelector('[data-testid=load-more]');
    expect(await listed()).toEqual(own.slice(0, 25));
    while ((await page.locator('[data-testid=load-more]').count()) > 0) {
      const shown = (await listed()).length;
      await page.click('[data-testid=load-more]');
      await page.waitForFunction((before) => document.querySelectorAll('[data-testid=conversation-item]').length > before, shown);
    }
    expect(await listed()).toEqual(own);

    await page.click(`[data-testid=conversation-item][data-id="${rest.conversationId}"]`);
    await lastAnswerIs('Answered over REST.');
    expect(await page.locator(`[data-testid=conversation-item][data-id="${rest.conversationId}"]`).getAttribute('class')).toBe('current');
    expect(await page.locator('[data-testid=read-only-note]').innerText()).toContain(`POST /v1/conversations/${rest.conversationId}/turns`);
    expect(await page.locator('[data-testid=message-input]').count()).toBe(0);
  });

  it("lists the person's own chats only, not what the OpenAI routes made, unless All sources is ticked", async () => {
    const response = (await harness.api.post('/openai/v1/responses', { model: 'scripted', input: scripted({ text: 'An OpenAI response.' }) })).body;
    expect(response.status).toBe('completed');
    const made = (await harness.api.get('/v1/conversations?source=responses&limit=1')).body.data[0].id as string;
    await page.reload();
    await page.waitForSelector('[data-testid=conversation-item]');
    const sources = () => page.locator('[data-testid=conversation-item]').evaluateAll((items) => items.map((item: any) => item.dataset.source));
    const shown = await sources();
    expect(shown.length).toBeGreaterThan(0);
    expect(shown.filter((source) => source !== 'chat' && source !== 'api')).toEqual([]);
    expect(await page.locator(`[data-testid=conversation-item][data-id="${made}"]`).count()).toBe(0);

    await page.click('[data-testid=all-sources]');
    await page.waitForSelector(`[data-testid=conversation-item][data-id="${made}"]`);
    expect(await page.locator(`[data-testid=conversation-item][data-id="${made}"] .tag`).innerText()).toBe('OpenAI');
    await page.click('[data-testid=all-sources]');
    await page.waitForFunction((id) => !document.querySelector(`[data-testid=conversation-item][data-id="${id}"]`), made);
  });

  /** The chat the page shows (`#chat=<externalId>`), as GET /api/chat/:id/messages answers it. */
  const shownChat = async () => {
    const chatId = new URLSearchParams(new URL(page.url()).hash.slice(1)).get('chat')!;
    return (await harness.api.get(`/api/chat/${encodeURIComponent(chatId)}/messages`)).body as any[];
  };

  it("shows an ended turn's tokens and cost under its answer, and tokens alone when its model has no price", async () => {
    await freshChat();
    await send(scripted({ text: 'A priced answer.' }));
    await lastAnswerIs('A priced answer.');
    // Shown once the turn ended: its usage is then whole.
    const lastUsage = page.locator('[data-testid=assistant-message]:last-child [data-testid=turn-usage]');
    const shown = await lastUsage.innerText();
    const priced = (await harness.api.get(`/v1/turns/${(await shownChat()).at(-1).id}`)).body.usage;
    expect(priced.costUsd).toBeCloseTo(
      ((priced.promptTokens - priced.cachedPromptTokens) * PRICE.input + priced.cachedPromptTokens * PRICE.cachedInput + priced.completionTokens * PRICE.output) / 1e6,
      12,
    );
    expect(priced.costUsd).toBeGreaterThan(0);
    const [, tokens, dollars] = /^([\d,]+) tokens · \$([\d.]+)$/.exec(shown) ?? [];
    expect(Number(tokens?.replace(/,/g, ''))).toBe(priced.totalTokens);
    // Two significant digits of the turn's cost.
    expect(Number(dollars)).toBe(Number(priced.costUsd.toPrecision(2)));

    // A chat of an unpriced model (its conversation made first, with the chat's externalId).
    const externalId = `unpriced-${Date.now()}`;
    await harness.newConversation({ externalId, model: 'free' });
    await page.goto(`${harness.stack.url}/#chat=${externalId}`);
    await page.reload();
    await send(scripted({ text: 'A free answer.' }));
    await lastAnswerIs('A free answer.');
    const shownFree = await lastUsage.innerText();
    const free = (await harness.api.get(`/v1/turns/${(await shownChat()).at(-1).id}`)).body.usage;
    expect(free.costUsd).toBe(0);
    expect(free.totalTokens).toBeGreaterThan(0);
    expect(shownFree).toBe(`${free.totalTokens.toLocaleString('en-US')} tokens`);
  });

  it('starts a chat on an agent picked in the list: the turn runs its instructions, and the header names it and its version', async () => {
    const instructions = `You are the playground's test agent ${Date.now()}.`;
    const name = `helper-${Date.now()}`;
    const agent = (await harness.api.post('/v1/agents', { name, instructions })).body;
    expect(agent.version).toBe(1);
    // The page lists the agents when it signs in (its session token cannot read them).
    await page.goto(harness.stack.url);
    await page.evaluate(() => sessionStorage.clear());
    await freshChat();
    expect(await page.locator('[data-testid=agent-select] option').allInnerTexts()).toEqual(expect.arrayContaining(['no agent', name]));
    await page.selectOption('[data-testid=agent-select]', agent.id);
    await page.click('[data-testid=new-chat]');
    expect(await page.getAttribute('[data-testid=chat-agent]', 'data-agent-version')).toBe('1');
    const marker = `agent-chat-${Date.now()}`;
    await send(`${marker} ${scripted({ text: 'Answered as the agent.' })}`);
    await lastAnswerIs('Answered as the agent.');
    const requests = model.requests.filter((each) => JSON.stringify(each.body).includes(marker));
    expect(requests).toHaveLength(1);
    expect((requests[0]!.body as { messages: unknown[] }).messages[0]).toEqual({ role: 'system', content: instructions });
    const turn = (await harness.api.get(`/v1/turns/${(await shownChat()).at(-1).id}`)).body;
    expect([turn.agentId, turn.agentVersion]).toEqual([agent.id, 1]);

    // A new version: the chat's next turn runs it, and the header says so.
    await harness.api.patch(`/v1/agents/${agent.id}`, { instructions: `${instructions} Version two.` });
    await send(scripted({ text: 'Answered as version two.' }));
    await lastAnswerIs('Answered as version two.');
    await page.waitForSelector('[data-testid=chat-agent][data-agent-version="2"]');
    expect(await page.locator('[data-testid=chat-agent]').innerText()).toBe(`Agent ${name} · v2`);

    // "no agent" starts a chat without one, and without a header.
    await page.selectOption('[data-testid=agent-select]', '');
    await page.click('[data-testid=new-chat]');
    await send(scripted({ text: 'Answered without an agent.' }));
    await lastAnswerIs('Answered without an agent.');
    expect((await harness.api.get(`/v1/turns/${(await shownChat()).at(-1).id}`)).body.agentId).toBeNull();
    expect(await page.locator('[data-testid=chat-agent]').count()).toBe(0);
  });

  it('answers /favicon.ico, and the icon the page links', async () => {
    const icon = await page.request.get(`${harness.stack.url}/favicon.ico`);
    expect(icon.status()).toBe(200);
    expect(icon.headers()['content-type']).toMatch(/^image\/svg\+xml/);
    expect(await icon.text()).toMatch(/^<svg /);
    const linked = await page.evaluate(() => document.querySelector('link[rel=icon]').href);
    expect((await page.request.get(linked)).status()).toBe(200);
  });
});
