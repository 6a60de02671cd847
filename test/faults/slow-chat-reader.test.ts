import http from 'node:http';
import WebSocket from 'ws';
import { SwitchyardClient, type SwitchyardEvent } from '@switchyard/client';
import { readMetric, waitForMetric } from '../support/http';
import { scripted, startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';

/** A browser that stops reading its `/api/chat` stream is cut off, as a slow websocket client is, and resumes. */
describe('a slow /api/chat reader', () => {
  let harness: ToolTurnHarness;

  beforeAll(async () => {
    // Short heartbeats: a reader that stopped reading while nothing happens is cut at the second one.
    harness = await startToolTurnHarness({ env: { WS_MAX_BUFFERED_BYTES: String(256 * 1024), SSE_HEARTBEAT_MS: '300' } });
  });
  afterAll(() => harness.close());

  it('is cut off (no [DONE]) once its backlog passes WS_MAX_BUFFERED_BYTES; the turn goes on to the whole answer', async () => {
    const chatId = `slow-${Date.now()}`;
    // The watcher shares this process's one thread with the whole stack, so a burst of the
    // answer can put it past the limit too: it resumes as API.md tells clients to (the client
    // library reconnects with after = its last seq), and sees every event exactly once.
    const watcher = new SwitchyardClient({ baseUrl: harness.stack.url, token: harness.apiKey, WebSocket });
    const subscription = watcher.subscribe(await conversationFor(chatId));
    await subscription.ready;
    const response = await postChat(chatId, scripted({ tokens: 1_000_000, chunkTokens: 1_000 }));
    // It stops reading: the kernel's buffers fill, then the server's, and the server gives up.
    response.pause();
    const events: SwitchyardEvent[] = [];
    let turnId = '';
    for await (const event of subscription.events()) {
      if (event.type !== 'turn-start') continue;
      turnId = event.turnId;
      break;
    }
    for await (const event of subscription.turn(turnId)) events.push(event);
    watcher.close();
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish' });

    const received = await readToEnd(response);
    expect(received.startsWith(`data: {"type":"start","messageId":"${turnId}"}`)).toBe(true);
    expect(received).not.toContain('[DONE]');

    const resumed = await resumeChat(chatId);
    // The turn has ended (a resume while it runs is the next test): nothing is active,
    // and the stored message has the whole answer.
    expect(resumed.statusCode).toBe(204);
    const conversation = await harness.api.get(`/v1/conversations/${await conversationFor(chatId)}`);
    const text = events.map((event) => (event.type === 'text-delta' ? event.delta : '')).join('');
    expect(conversation.body.messages.at(-1)).toMatchObject({ role: 'assistant', content: text });
  }, 90_000);

  it('resumes after the cut while the turn still runs: the whole answer so far once, then what follows', async () => {
    const chatId = `slow-resume-${Date.now()}`;
    const watcher = new SwitchyardClient({ baseUrl: harness.stack.url, token: harness.apiKey, WebSocket });
    const subscription = watcher.subscribe(await conversationFor(chatId));
    await subscription.ready;
    // A burst past the limit and a tool call, then a step the model holds until the turn is cancelled.
    const scenario = {
      steps: [
        { tokens: 1_000_000, chunkTokens: 1_000, toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }] },
        { text: 'never sent', firstTokenDelayMs: 600_000 },
      ],
    };
    const response = await postChat(chatId, scripted(scenario));
    response.pause();
    let turnId = '';
    for await (const event of subscription.events()) {
      if (event.type !== 'turn-start') continue;
      turnId = event.turnId;
      break;
    }
    const firstStepText: string[] = [];
    for await (const event of subscription.turn(turnId)) {
      if (event.type === 'text-delta') firstStepText.push(event.delta);
      if (event.type === 'step-start' && event.step === 2) break;
    }
    watcher.close();
    // Cut off during the burst: what it had buffered, and no end.
    const cut = await readToEnd(response);
    expect(cut).not.toContain('[DONE]');

    // The turn still runs: the resume answers with its stream from the start.
    const resumed = await resumeChat(chatId);
    expect(resumed.statusCode).toBe(200);
    resumed.setEncoding('utf8');
    const reader = resumed[Symbol.asyncIterator]() as AsyncIterator<string>;
    // Read to the second step's start (after the tool's output) before the turn is cancelled,
    // looking only at what each read adds: searching megabytes on every read is quadratic.
    const parts: string[] = [];
    let window = '';
    let toolOutputSeen = false;
    for (;;) {
      const { value, done } = await reader.next();
      if (done) throw new Error(`the resumed stream ended before the second step: ${parts.join('').slice(-300)}`);
      parts.push(value);
      window = window.slice(-64) + value;
      if (!toolOutputSeen && window.includes('"type":"tool-output-available"')) {
        toolOutputSeen = true;
        window = window.slice(window.indexOf('"type":"tool-output-available"'));
      }
      if (toolOutputSeen && window.includes('"type":"start-step"')) break;
    }
    expect((await harness.api.post(`/v1/turns/${turnId}/cancel`)).body.status).toBe('cancelled');
    for (let read = await reader.next(); !read.done; read = await reader.next()) parts.push(read.value);
    const chunks = parts
      .join('')
      .split('\n\n')
      .filter((block) => block.startsWith('data: ') && block !== 'data: [DONE]')
      .map((block) => JSON.parse(block.slice('data: '.length)));
    expect(chunks[0]).toEqual({ type: 'start', messageId: turnId });
    expect(
      chunks
        .filter((chunk) => chunk.type === 'text-delta')
        .map((chunk) => chunk.delta)
        .join(''),
    ).toBe(firstStepText.join(''));
    expect(chunks.filter((chunk) => chunk.type === 'tool-output-available')).toEqual([expect.objectContaining({ output: expect.objectContaining({ result: 42 }) })]);
    expect(chunks.at(-1)).toMatchObject({ type: 'abort' });
  }, 90_000);

  it('cuts off a resume that stops reading while the turn is held: its replay waits for it, the heartbeat ends it', async () => {
    const chatId = `slow-replay-${Date.now()}`;
    const conversationId = await conversationFor(chatId);
    const watcher = new SwitchyardClient({ baseUrl: harness.stack.url, token: harness.apiKey, WebSocket });
    const subscription = watcher.subscribe(conversationId);
    await subscription.ready;
    const scenario = {
      steps: [
        { tokens: 1_000_000, chunkTokens: 1_000, toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }] },
        { text: 'never sent', firstTokenDelayMs: 600_000 },
      ],
    };
    const { turnId } = (await harness.api.post(`/v1/conversations/${conversationId}/turns`, { content: scripted(scenario) })).body;
    for await (const event of subscription.turn(turnId)) if (event.type === 'step-start' && event.step === 2) break;
    watcher.close();

    // Everything it will get is replay (megabytes, past the limit), and then nothing happens.
    const cutsBefore = (await readMetric(harness.stack.url, SSE_CUTS)) ?? 0;
    const response = await resumeChat(chatId);
    response.pause();
    await waitForMetric(harness.stack.url, SSE_CUTS, cutsBefore + 1);
    const received = await readToEnd(response);
    expect(received.startsWith(`data: {"type":"start","messageId":"${turnId}"}`)).toBe(true);
    expect(received).not.toContain('[DONE]');
    expect(received).not.toContain('"type":"tool-output-available"');
    expect((await harness.api.post(`/v1/turns/${turnId}/cancel`)).body.status).toBe('cancelled');
  }, 90_000);

  const SSE_CUTS = 'switchyard_slow_consumer_disconnects_total{transport="sse"}';

  /** Reads the rest of a (paused) response to its end. */
  async function readToEnd(response: http.IncomingMessage): Promise<string> {
    let text = '';
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => (text += chunk));
    response.resume();
    await new Promise((resolve) => response.once('end', resolve));
    return text;
  }

  function resumeChat(chatId: string): Promise<http.IncomingMessage> {
    return chatRequest(`/api/chat/${chatId}/stream`);
  }

  function postChat(chatId: string, text: string): Promise<http.IncomingMessage> {
    const body = JSON.stringify({ id: chatId, messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text }] }] });
    return chatRequest('/api/chat', body);
  }

  /**
   * A GET, or a POST of `body`, on a connection of its own. A reader that stops reading is cut
   * off only once the burst has filled the kernel's buffers as well as the server's. A pooled
   * connection that carried an earlier test's megabytes to a fast reader comes back with a
   * receive buffer the kernel grew to match (up to tcp_rmem's maximum): it takes in the whole
   * burst, nothing is cut, and the stream stays open for as long as the turn is held.
   */
  function chatRequest(path: string, body?: string): Promise<http.IncomingMessage> {
    return new Promise<http.IncomingMessage>((resolve, reject) => {
      const headers = { authorization: `Bearer ${harness.apiKey}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) };
      const request = http.request(new URL(path, harness.stack.url), { method: body === undefined ? 'GET' : 'POST', agent: false, headers }, resolve);
      request.on('error', reject);
      request.end(body);
    });
  }

  async function conversationFor(chatId: string): Promise<string> {
    const found = await harness.api.get(`/v1/conversations?externalId=${chatId}`);
    if (found.body.data[0]) return found.body.data[0].id;
    return (await harness.api.post('/v1/conversations', { externalId: chatId })).body.id;
  }
});
