import http from 'node:http';
import WebSocket from 'ws';
import { SwitchyardClient, type SwitchyardEvent, type WebSocketConstructor } from '../../src/client';
import { scripted, startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';

/** A browser that stops reading its `/api/chat` stream is cut off, as a slow websocket client is, and resumes. */
describe('a slow /api/chat reader', () => {
  let harness: ToolTurnHarness;

  beforeAll(async () => {
    harness = await startToolTurnHarness({ env: { WS_MAX_BUFFERED_BYTES: String(256 * 1024) } });
  });
  afterAll(() => harness.close());

  it('is cut off (no [DONE]) once its backlog passes WS_MAX_BUFFERED_BYTES; the turn goes on to the whole answer', async () => {
    const chatId = `slow-${Date.now()}`;
    // The watcher shares this process's one thread with the whole stack, so a burst of the
    // answer can put it past the limit too: it resumes as API.md tells clients to (the client
    // library reconnects with after = its last seq), and sees every event exactly once.
    const watcher = new SwitchyardClient({ baseUrl: harness.stack.url, token: harness.apiKey, WebSocket: WebSocket as unknown as WebSocketConstructor });
    const subscription = watcher.subscribe(await conversationFor(chatId));
    await subscription.ready;
    const body = JSON.stringify({ id: chatId, messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: scripted({ tokens: 1_000_000, chunkTokens: 1_000 }) }] }] });
    const url = new URL('/api/chat', harness.stack.url);
    const response = await new Promise<http.IncomingMessage>((resolve, reject) => {
      const request = http.request(url, { method: 'POST', headers: { authorization: `Bearer ${harness.apiKey}`, 'content-type': 'application/json' } }, resolve);
      request.on('error', reject);
      request.end(body);
    });
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

    let received = '';
    response.setEncoding('utf8');
    response.on('data', (chunk: string) => (received += chunk));
    response.resume();
    await new Promise((resolve) => response.once('end', resolve));
    expect(received.startsWith(`data: {"type":"start","messageId":"${turnId}"}`)).toBe(true);
    expect(received).not.toContain('[DONE]');

    const resumed = await fetch(`${harness.stack.url}/api/chat/${chatId}/stream`, { headers: { authorization: `Bearer ${harness.apiKey}` } });
    // The turn has ended (a resume while it runs is in ai-sdk-chat.test.ts): nothing is active,
    // and the stored message has the whole answer.
    expect(resumed.status).toBe(204);
    const conversation = await harness.api.get(`/v1/conversations/${await conversationFor(chatId)}`);
    const text = events.map((event) => (event.type === 'text-delta' ? event.delta : '')).join('');
    expect(conversation.body.messages.at(-1)).toMatchObject({ role: 'assistant', content: text });
  }, 90_000);

  async function conversationFor(chatId: string): Promise<string> {
    const found = await harness.api.get(`/v1/conversations?externalId=${chatId}`);
    if (found.body.data[0]) return found.body.data[0].id;
    return (await harness.api.post('/v1/conversations', { externalId: chatId })).body.id;
  }
});
