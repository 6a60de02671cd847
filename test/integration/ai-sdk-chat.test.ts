import { lastAssistantMessageIsCompleteWithToolCalls } from 'ai';
import { NodeChat, textOf, toolPartsOf } from '../support/ai-sdk-chat';
import { apiClient } from '../support/http';
import { startToolTurnHarness, scripted, type ToolTurnHarness } from '../support/tool-turns';

const toolFiles = {
  'browser.json': { kind: 'client', name: 'browser_timezone', description: "The user's time zone, from their browser", timeoutMs: 20_000 },
};

/** `/api/chat` driven by the AI SDK's own chat logic (AbstractChat + DefaultChatTransport). */
describe('AI SDK routes: POST /api/chat and GET /api/chat/:id/stream', () => {
  let harness: ToolTurnHarness;
  let chatCount = 0;
  const newChat = (options: Partial<ConstructorParameters<typeof NodeChat>[0]> = {}) =>
    new NodeChat({ url: harness.stack.url, token: harness.apiKey, id: `chat-${Date.now()}-${chatCount++}`, ...options });

  beforeAll(async () => {
    harness = await startToolTurnHarness({ toolFiles });
  });
  afterAll(() => harness.close());

  it('streams a text answer into one assistant message whose id is the turn id, in a conversation named by the chat id', async () => {
    const chat = newChat();
    await chat.sendMessage({ text: `hi ${scripted({ text: 'Hello from Switchyard.', tokenDelayMs: 2 })}` });
    expect({ status: chat.status, error: chat.error?.message }).toEqual({ status: 'ready', error: undefined });
    expect(chat.messages.map((message) => message.role)).toEqual(['user', 'assistant']);
    const assistant = chat.messages[1]!;
    expect(textOf(assistant)).toBe('Hello from Switchyard.');

    const turn = await harness.api.get(`/v1/turns/${assistant.id}`);
    expect(turn.body).toMatchObject({ status: 'completed', finishReason: 'stop' });
    const conversations = await harness.api.get(`/v1/conversations?externalId=${chat.id}`);
    expect(conversations.body.data).toEqual([expect.objectContaining({ id: turn.body.conversationId, externalId: chat.id })]);
  });

  it('shows a multi-step turn with two parallel server tools as one message: tool parts with outputs, tool processing, then text', async () => {
    const chat = newChat();
    const scenario = {
      steps: [
        {
          toolCalls: [
            { name: 'calculator', arguments: { expression: '6*7' } },
            { name: 'calculator', arguments: { expression: '1+1' } },
          ],
        },
        { text: 'They are 42 and 2.' },
      ],
    };
    await chat.sendMessage({ text: scripted(scenario) });
    expect({ status: chat.status, error: chat.error?.message }).toEqual({ status: 'ready', error: undefined });
    expect(chat.assistantMessages).toHaveLength(1);
    const message = chat.assistantMessages[0]!;
    expect(toolPartsOf(message)).toEqual([
      expect.objectContaining({
        type: 'tool-calculator',
        state: 'output-available',
        input: { expression: '6*7' },
        output: expect.objectContaining({ result: 42 }),
        providerExecuted: true,
        toolMetadata: expect.objectContaining({ attempts: 1 }),
      }),
      expect.objectContaining({
        type: 'tool-calculator',
        state: 'output-available',
        input: { expression: '1+1' },
        output: expect.objectContaining({ result: 2 }),
        providerExecuted: true,
      }),
    ]);
    expect(message.parts.filter((part) => part.type === 'step-start')).toHaveLength(2);
    expect(message.parts.find((part) => part.type === 'data-tool-processing')).toMatchObject({
      id: `${message.id}:1`,
      data: { status: 'complete', step: 1, results: 2, failed: 0 },
    });
    expect(textOf(message)).toBe('They are 42 and 2.');
  });

  it('runs a client tool through onToolCall and addToolOutput: the automatic re-send continues the same assistant message', async () => {
    const seenCalls: string[] = [];
    const chat: NodeChat = newChat({
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
      onToolCall: ({ toolCall }) => {
        seenCalls.push(toolCall.toolName);
        void chat.addToolOutput({ tool: 'browser_timezone', toolCallId: toolCall.toolCallId, output: { timeZone: 'Europe/Lisbon' } });
      },
    });
    const marker = `tz-${Date.now()}`;
    const scenario = { steps: [{ toolCalls: [{ name: 'browser_timezone' }] }, { text: 'You are in Lisbon time.' }] };
    await chat.sendMessage({ text: `${marker} ${scripted(scenario)}` });
    await chat.waitUntil((each) => each.status === 'ready' && textOf(each.lastMessage) === 'You are in Lisbon time.');

    expect(seenCalls).toEqual(['browser_timezone']);
    expect(chat.assistantMessages).toHaveLength(1);
    const message = chat.assistantMessages[0]!;
    expect(toolPartsOf(message)).toEqual([expect.objectContaining({ state: 'output-available', output: { timeZone: 'Europe/Lisbon' } })]);
    expect(toolPartsOf(message)[0].providerExecuted).toBeUndefined();
    // The step's tool processing started before the answer and completed after it: one part, one step.
    expect(message.parts.filter((part) => part.type === 'data-tool-processing')).toEqual([
      { type: 'data-tool-processing', id: `${message.id}:1`, data: { status: 'complete', step: 1, results: 1, failed: 0 } },
    ]);
    const turn = await harness.api.get(`/v1/turns/${message.id}`);
    expect(turn.body).toMatchObject({ status: 'completed', toolCalls: [expect.objectContaining({ kind: 'client', status: 'succeeded', result: { timeZone: 'Europe/Lisbon' } })] });
    // One turn, two provider requests, the answer sent once.
    const requests = harness.providerRequests(marker);
    expect(requests).toHaveLength(2);
    expect(requests[1].messages.filter((each: any) => each.role === 'tool')).toHaveLength(1);

    // The same answer again (a second tab, a retried request) runs nothing twice.
    const repeat = await postChat(chat.id, chat.messages);
    expect(repeat.status).toBe(200);
    expect(repeat.chunks.map((chunk) => chunk.type)).toEqual(['start', 'finish']);
    expect(repeat.chunks[0]).toEqual({ type: 'start', messageId: message.id });
    expect(harness.providerRequests(marker)).toHaveLength(2);
  });

  it('replays a turn that went on after a client tool to a second tab: the whole message, and the tool is not run again', async () => {
    const first: NodeChat = newChat({
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
      onToolCall: ({ toolCall }) => void first.addToolOutput({ tool: 'browser_timezone', toolCallId: toolCall.toolCallId, output: { timeZone: 'UTC' } }),
    });
    const text = Array.from({ length: 60 }, (_, i) => `part${i}`).join(' ');
    // sendMessage settles only after the automatic re-send has streamed the rest: not awaited here.
    const sending = first.sendMessage({ text: scripted({ steps: [{ toolCalls: [{ name: 'browser_timezone' }] }, { text, tokenDelayMs: 15 }] }) });
    await first.waitUntil((each) => each.lastMessage?.role === 'assistant' && textOf(each.lastMessage).length > 20);

    // Another tab opens the chat while the second step streams and resumes it.
    const asked: string[] = [];
    const second = newChat({ id: first.id, messages: first.messages.slice(0, 1), onToolCall: ({ toolCall }) => void asked.push(toolCall.toolCallId) });
    await second.resumeStream();
    expect({ status: second.status, error: second.error?.message }).toEqual({ status: 'ready', error: undefined });
    expect(asked).toEqual([]);
    expect(second.assistantMessages).toHaveLength(1);
    expect(textOf(second.lastMessage)).toBe(text);
    expect(toolPartsOf(second.lastMessage)).toEqual([expect.objectContaining({ state: 'output-available', input: {}, output: { timeZone: 'UTC' } })]);
    await sending;
    expect(textOf(first.lastMessage)).toBe(text);
  });

  it('resumes after the HTTP request was cut mid-stream: the whole answer, once; the turn never stopped', async () => {
    const text = Array.from({ length: 60 }, (_, i) => `word${i}`).join(' ');
    let cut = false;
    const chat = newChat({ fetch: cutAfterChunks(8, () => (cut = true)) });
    await chat.sendMessage({ text: scripted({ text, tokenDelayMs: 15 }) });
    expect(cut).toBe(true);
    expect(chat.status).toBe('error');
    const partial = textOf(chat.lastMessage);
    expect(text.startsWith(partial)).toBe(true);
    expect(partial.length).toBeLessThan(text.length);

    await chat.resumeStream();
    expect({ status: chat.status, error: chat.error?.message }).toEqual({ status: 'ready', error: undefined });
    expect(chat.assistantMessages).toHaveLength(1);
    expect(textOf(chat.lastMessage)).toBe(text);
    expect((await harness.api.get(`/v1/turns/${chat.lastMessage!.id}`)).body.status).toBe('completed');
  });

  it('answers a resume with no active turn with 204, leaving the chat as it was', async () => {
    const chat = newChat();
    await chat.sendMessage({ text: scripted({ text: 'done already' }) });
    const before = structuredClone(chat.messages);
    await chat.resumeStream();
    expect({ status: chat.status, error: chat.error?.message }).toEqual({ status: 'ready', error: undefined });
    expect(chat.messages).toEqual(before);
    const unknown = await fetch(`${harness.stack.url}/api/chat/never-used/stream`, { headers: { authorization: `Bearer ${harness.apiKey}` } });
    expect(unknown.status).toBe(204);
  });

  it('stops with POST /v1/turns/:id/cancel, the turn id taken from start.messageId: the stream ends with abort, the message marked cancelled', async () => {
    const chat = newChat();
    const sending = chat.sendMessage({ text: scripted({ tokens: 2_000, tokenDelayMs: 10 }) });
    await chat.waitUntil((each) => each.status === 'streaming' && textOf(each.lastMessage).length > 0);
    const turnId = chat.lastMessage!.id;
    expect((await harness.api.post(`/v1/turns/${turnId}/cancel`)).body.status).toBe('cancelled');
    await sending;
    expect({ status: chat.status, error: chat.error?.message }).toEqual({ status: 'ready', error: undefined });
    expect(chat.lastMessage!.metadata).toEqual({ turnStatus: 'cancelled' });
    expect((await harness.api.get(`/v1/turns/${turnId}`)).body.status).toBe('cancelled');
    // After a reload, the history marks it the same, with the text the chat had shown.
    const history = (await harness.api.get(`/api/chat/${chat.id}/messages`)).body;
    expect(history.at(-1)).toMatchObject({ id: turnId, role: 'assistant', metadata: { turnStatus: 'cancelled' } });
    expect(textOf(history.at(-1))).toBe(textOf(chat.lastMessage));
  });

  it('serves the stored chat as the UIMessages the live stream built (GET /api/chat/:id/messages), to a session token too', async () => {
    const chat: NodeChat = newChat({
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithToolCalls,
      onToolCall: ({ toolCall }) => void chat.addToolOutput({ tool: 'browser_timezone', toolCallId: toolCall.toolCallId, output: { timeZone: 'Asia/Tokyo' } }),
    });
    const withTools = {
      steps: [
        {
          text: 'Working on it.',
          toolCalls: [
            { name: 'calculator', arguments: { expression: '6*7' } },
            { name: 'calculator', arguments: { expression: '1/(' } },
            { name: 'not_offered', arguments: {} },
          ],
        },
        { toolCalls: [{ name: 'browser_timezone' }] },
        { text: 'All done.' },
      ],
    };
    const asked = [`tools ${scripted(withTools)}`, `again ${scripted({ text: 'Second answer.' })}`];
    for (const text of asked) {
      await chat.sendMessage({ text });
      await chat.waitUntil((each) => each.status === 'ready' && (each.lastMessage?.metadata as any)?.turnStatus === 'completed');
    }

    const { token } = (await harness.api.post('/v1/session-tokens', {})).body;
    const session = apiClient(harness.stack.url, token);
    const history = await session.get(`/api/chat/${chat.id}/messages`);
    expect(history.status).toBe(200);
    expect(history.body.filter((message: any) => message.role === 'assistant')).toEqual(JSON.parse(JSON.stringify(chat.assistantMessages)));
    expect(history.body.filter((message: any) => message.role === 'user').map(textOf)).toEqual(asked);
    expect(history.body.map((message: any) => message.role)).toEqual(['user', 'assistant', 'user', 'assistant']);
    // What the comparison covers, spelled out.
    expect(toolPartsOf(history.body[1]).map((part) => [part.type, part.state, part.providerExecuted, part.toolMetadata?.attempts])).toEqual([
      ['tool-calculator', 'output-available', true, 1],
      ['tool-calculator', 'output-error', true, 1],
      ['tool-not_offered', 'output-error', true, 0],
      ['tool-browser_timezone', 'output-available', undefined, expect.any(Number)],
    ]);
    expect(history.body[1].metadata).toEqual({ turnStatus: 'completed' });

    // A chat never used is a new one; another user's chat of the same id is not this user's.
    expect((await session.get('/api/chat/never-used/messages')).body).toEqual([]);
    const other = await harness.stack.createUser('another-chat-user');
    expect((await apiClient(harness.stack.url, other.apiKey).get(`/api/chat/${chat.id}/messages`)).body).toEqual([]);
  });

  it('takes a resend of the same user message as the same turn, refuses a second message while one runs, and works with a session token', async () => {
    const chatId = `chat-idem-${Date.now()}`;
    const user = { id: 'msg-1', role: 'user', parts: [{ type: 'text', text: scripted({ text: 'only once', tokenDelayMs: 30 }) }] };
    const [first, second] = await Promise.all([postChat(chatId, [user]), postChat(chatId, [user])]);
    const turnIds = [first, second].map((answer) => answer.chunks[0].messageId);
    expect(turnIds[0]).toBe(turnIds[1]);
    for (const answer of [first, second]) {
      expect(answer.headers.get('x-vercel-ai-ui-message-stream')).toBe('v1');
      expect(answer.raw.trimEnd().endsWith('data: [DONE]')).toBe(true);
      expect(
        answer.chunks
          .filter((chunk) => chunk.type === 'text-delta')
          .map((chunk) => chunk.delta)
          .join(''),
      ).toBe('only once');
    }
    const conversation = (await harness.api.get(`/v1/conversations?externalId=${chatId}`)).body.data[0];
    const messages = (await harness.api.get(`/v1/conversations/${conversation.id}`)).body.messages;
    expect(messages.filter((message: any) => message.role === 'user')).toHaveLength(1);

    const slow = { id: 'msg-2', role: 'user', parts: [{ type: 'text', text: scripted({ tokens: 1_000, tokenDelayMs: 10 }) }] };
    const controller = new AbortController();
    const running = await fetch(`${harness.stack.url}/api/chat`, chatRequest(chatId, [user, slow], harness.apiKey, controller.signal));
    const busy = await postChat(chatId, [user, slow, { id: 'msg-3', role: 'user', parts: [{ type: 'text', text: 'and another' }] }]);
    expect(busy.status).toBe(409);
    expect(busy.json.error.code).toBe('conversation_busy');
    controller.abort();
    await running.body?.cancel().catch(() => undefined);

    const { token } = (await harness.api.post('/v1/session-tokens', {})).body;
    const viaSession = await postChat(
      `chat-session-${Date.now()}`,
      [{ id: 'm', role: 'user', parts: [{ type: 'text', text: scripted({ text: 'with a session token' }) }] }],
      token,
    );
    expect(viaSession.status).toBe(200);
    expect(viaSession.chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'stop', messageMetadata: { turnStatus: 'completed' } });
  });

  it('sends the model the stored history, not earlier messages the client edited', async () => {
    const chat = newChat();
    const firstText = `original question ${scripted({ text: 'original answer' })}`;
    await chat.sendMessage({ text: firstText });
    expect(textOf(chat.lastMessage)).toBe('original answer');
    const [user, assistant] = chat.messages as [any, any];
    const edited = [
      { ...user, parts: [{ type: 'text', text: 'EDITED question' }] },
      { ...assistant, parts: [{ type: 'text', text: 'EDITED answer' }] },
    ];
    const marker = `follow-up-${Date.now()}`;
    const next = await postChat(chat.id, [...edited, { id: 'next', role: 'user', parts: [{ type: 'text', text: `${marker} ${scripted({ text: 'second answer' })}` }] }]);
    expect(next.status).toBe(200);
    expect(next.chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'stop', messageMetadata: { turnStatus: 'completed' } });

    const [request] = harness.providerRequests(marker);
    const sent = request.messages.filter((message: any) => message.role !== 'system').map((message: any) => [message.role, message.content]);
    expect(sent).toEqual([
      ['user', firstText],
      ['assistant', 'original answer'],
      ['user', expect.stringContaining(marker)],
    ]);
    expect(JSON.stringify(request.messages)).not.toContain('EDITED');
    // The stored conversation kept its own history too.
    const conversation = (await harness.api.get(`/v1/conversations?externalId=${chat.id}`)).body.data[0];
    const stored = (await harness.api.get(`/v1/conversations/${conversation.id}`)).body.messages.map((message: any) => message.content);
    expect(stored.slice(0, 2)).toEqual([firstText, 'original answer']);
  });

  it('refuses bad bodies with clear 400s and never makes a turn of them', async () => {
    const chatId = `chat-bad-${Date.now()}`;
    const userMessage = { id: 'u1', role: 'user', parts: [{ type: 'text', text: scripted({ text: 'fine' }) }] };
    const cases: [unknown, RegExp][] = [
      [{ messages: [userMessage] }, /id/],
      [{ id: chatId, messages: [] }, /messages/],
      [{ id: chatId, messages: [{ id: 'x', role: 'robot', parts: [] }] }, /role/],
      [{ id: chatId, messages: [{ id: 'x', role: 'user', parts: [{ type: 'step-start' }] }] }, /no text and no image/],
      [{ id: chatId, messages: [{ id: 'x', role: 'user', parts: [{ type: 'text', text: '' }] }] }, /no text and no image/],
      [{ id: chatId, messages: [{ id: 'x', role: 'user', parts: [{ type: 'file', mediaType: 'application/pdf', url: 'data:,' }] }] }, /image/],
      [{ id: chatId, messages: [userMessage, { id: 'a1', role: 'assistant', parts: [{ type: 'text', text: 'hi' }] }] }, /nothing new/],
      [{ id: chatId, messages: [userMessage], trigger: 'regenerate-message' }, /not a user message on this chat's path/],
    ];
    for (const [body, message] of cases) {
      const answer = await harness.api.post('/api/chat', body);
      expect([answer.status, answer.body.error.code]).toEqual([400, 'invalid_request']);
      expect(answer.body.error.message).toMatch(message);
    }
    // A tool part naming no pending client call of the turn.
    const chat = newChat();
    await chat.sendMessage({ text: scripted({ text: 'no tools here' }) });
    const assistant = chat.lastMessage!;
    const stray = { ...assistant, parts: [...assistant.parts, { type: 'tool-browser_timezone', toolCallId: 'call_nope', state: 'output-available', input: {}, output: 1 }] };
    const refused = await harness.api.post('/api/chat', { id: chat.id, messages: [...chat.messages.slice(0, -1), stray] });
    expect([refused.status, refused.body.error.message]).toEqual([400, expect.stringMatching(/call_nope is not a client tool call/)]);
    const notATurn = await harness.api.post('/api/chat', { id: chat.id, messages: [{ ...stray, id: 'someone-elses' }] });
    expect(notATurn.status).toBe(400);
    const conversation = (await harness.api.get(`/v1/conversations?externalId=${chat.id}`)).body.data[0];
    expect((await harness.api.get(`/v1/conversations/${conversation.id}`)).body.messages.filter((each: any) => each.role === 'user')).toHaveLength(1);
    expect((await apiClient(harness.stack.url, 'sk_wrong').post('/api/chat', { id: chatId, messages: [userMessage] })).status).toBe(401);
  });

  it('runs a user message that is only an image: the model gets the image part', async () => {
    const chatId = `chat-image-${Date.now()}`;
    const imageUrl = `https://images.example/${chatId}.png`;
    const answer = await postChat(chatId, [{ id: 'img', role: 'user', parts: [{ type: 'file', mediaType: 'image/png', url: imageUrl }] }]);
    expect(answer.status).toBe(200);
    expect(answer.chunks.at(-1)).toEqual({ type: 'finish', finishReason: 'stop', messageMetadata: { turnStatus: 'completed' } });
    const [request] = harness.providerRequests(imageUrl);
    expect(request.messages.at(-1)).toEqual({ role: 'user', content: [{ type: 'image_url', image_url: { url: imageUrl } }] });
  });

  it('refuses answers to client tools for a chat it does not know, making no conversation', async () => {
    const chatId = `chat-unknown-${Date.now()}`;
    const answering = {
      id: 'turn_not_here',
      role: 'assistant',
      parts: [{ type: 'tool-browser_timezone', toolCallId: 'call_0', state: 'output-available', input: {}, output: { timeZone: 'UTC' } }],
    };
    const refused = await harness.api.post('/api/chat', { id: chatId, messages: [{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'hi' }] }, answering] });
    expect([refused.status, refused.body.error.code]).toEqual([400, 'invalid_request']);
    expect((await harness.api.get(`/v1/conversations?externalId=${chatId}`)).body.data).toEqual([]);
  });

  async function postChat(chatId: string, messages: unknown[], token = harness.apiKey) {
    const response = await fetch(`${harness.stack.url}/api/chat`, chatRequest(chatId, messages, token));
    const raw = await response.text();
    const isStream = response.headers.get('content-type')?.startsWith('text/event-stream');
    const chunks = isStream
      ? raw
          .split('\n\n')
          .filter((block) => block.startsWith('data: ') && block !== 'data: [DONE]')
          .map((block) => JSON.parse(block.slice('data: '.length)))
      : [];
    return { status: response.status, headers: response.headers, raw, chunks, json: isStream ? null : JSON.parse(raw) };
  }
});

function chatRequest(chatId: string, messages: unknown[], token: string, signal?: AbortSignal): RequestInit {
  return {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ id: chatId, messages, trigger: 'submit-message' }),
    ...(signal ? { signal } : {}),
  };
}

/** A fetch whose first response body breaks, as a dropped connection does, after `count` reads. */
function cutAfterChunks(count: number, onCut: () => void): typeof fetch {
  let responses = 0;
  return async (input, init) => {
    const response = await fetch(input, init);
    if (!response.body || ++responses > 1) return response;
    const reader = response.body.getReader();
    let reads = 0;
    const body = new ReadableStream<Uint8Array>({
      async pull(controller) {
        if (++reads > count) {
          onCut();
          await reader.cancel();
          controller.error(new TypeError('network error: connection reset'));
          return;
        }
        const { done, value } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
}
