import type OpenAI from 'openai';
import { tokenize } from '../../src/scripted-model/tokenize';
import { NodeChat, textOf } from '../support/ai-sdk-chat';
import { visibleStepTexts } from '../support/client-view';
import { checkInvariants } from '../support/invariants';
import { openAiClient } from '../support/openai-sdk';
import { httpToolEntry, startToolHttpServer, type ToolHttpServer } from '../support/tool-servers';
import { eventsOfType, scripted, startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';
import type { TestWsClient } from '../support/ws-client';

/**
 * A cancel (and `onBusy: "interrupt"`) loses nothing the user saw (docs/API.md, "HTTP API";
 * docs/RELIABILITY.md case 44): the text and reasoning the stopped step had streamed are the
 * turn's last assistant message, `incomplete: true`, in every view of the conversation, and the
 * next turn sends its text to the model with a tool history the scripted model accepts (it
 * answers 400 to a call without its tool message, as OpenAI does). The streams stall after a
 * known number of tokens (`stallAfterTokens`), so what clients saw is known exactly when the
 * cancel comes.
 */
describe('what a cancel keeps of the step it stops', () => {
  let server: ToolHttpServer;
  let harness: ToolTurnHarness;

  beforeAll(async () => {
    server = await startToolHttpServer();
    server.route('/stuck', { hang: true });
    const tool = (name: string) => httpToolEntry(server.url, name, { timeoutMs: 30_000, retries: 0 });
    harness = await startToolTurnHarness({ toolFiles: { 'tools.json': { tools: [tool('stuck'), tool('record')] } } });
  });
  afterAll(async () => {
    await harness.close();
    await server.close();
  });

  const turnEvents = (client: TestWsClient, turnId: string) => client.events().filter((event) => event.turnId === turnId);
  const storedMessages = async (conversationId: string) => (await harness.api.get(`/v1/conversations/${conversationId}`)).body.messages as any[];
  /** The messages the model was sent from the user message carrying `marker` on. */
  const sentFrom = (request: any, marker: string) =>
    request.messages.slice(request.messages.findIndex((message: any) => message.role === 'user' && JSON.stringify(message.content).includes(marker)));
  const tokens = (text: string) => tokenize(text).length;

  it('keeps the text and reasoning the clients saw as the incomplete last message, leaves out the calls still streaming, and sends the text next', async () => {
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const reasoning = 'Adding the second number.';
    const text = 'Recorded one; now the other two';
    // Step 2 stalls after its reasoning, its text and the first two fragments of each of two parallel calls.
    const { turnId, marker } = await harness.postTurn(conversationId, {
      steps: [
        { toolCalls: [{ name: 'record', arguments: { n: 1 } }] },
        {
          reasoning,
          text,
          toolCalls: [
            { name: 'record', arguments: { n: 2 } },
            { name: 'record', arguments: { n: 3 } },
          ],
          interleave: true,
          stallAfterTokens: tokens(reasoning) + tokens(text) + 4,
        },
      ],
    });
    await client.waitFor(() => eventsOfType(turnEvents(client, turnId), 'tool-call-delta').filter((event) => event.argsTextDelta).length === 2);

    const cancelled = await harness.api.post(`/v1/turns/${turnId}/cancel`);
    expect(cancelled.body).toMatchObject({ status: 'cancelled', finishReason: 'cancelled' });
    await client.waitForTurnEnd(turnId);
    const events = turnEvents(client, turnId);
    expect(visibleStepTexts(events).get(2)).toBe(text);

    const messages = await storedMessages(conversationId);
    expect(messages.map((message) => [message.role, message.incomplete ?? false])).toEqual([
      ['user', false],
      ['assistant', false],
      ['tool', false],
      ['assistant', true],
    ]);
    const kept = messages[3];
    expect(kept).toEqual({ id: expect.stringMatching(/^msg_/), role: 'assistant', content: text, reasoning, incomplete: true, turnId });
    const turn = (await harness.api.get(`/v1/turns/${turnId}`)).body;
    expect(turn).toMatchObject({ status: 'cancelled', step: 1, partialToolCalls: [], incompleteMessage: { id: kept.id, step: 2, content: text, reasoning } });
    expect(turn.toolCalls.map((call: any) => [call.step, call.status])).toEqual([[1, 'succeeded']]);
    expect(await checkInvariants(harness.stack.resources.db, { turnIds: [turnId], toolExecutions: server.executions('/record'), events })).toEqual({ [turnId]: 'cancelled' });

    // A fork at the kept message copies it as it is: still incomplete, its reasoning with it.
    const fork = await harness.api.post(`/v1/conversations/${conversationId}/fork`, { messageId: kept.id });
    expect(fork.status).toBe(201);
    expect((await storedMessages(fork.body.id)).at(-1)).toMatchObject({ role: 'assistant', content: text, reasoning, incomplete: true, turnId: null });

    const next = await harness.runTurn({ text: 'Understood.' }, { conversationId });
    expect(next.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    const sent = sentFrom(harness.providerRequests(next.marker)[0], marker);
    expect(sent.map((message: any) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
    // Its text alone: no calls, no reasoning (the provider takes none back).
    expect(sent[3]).toEqual({ role: 'assistant', content: text });
  });

  it('keeps exactly what the clients were shown of a stream still flowing when the cancel comes', async () => {
    const conversationId = await harness.newConversation();
    const watchers = [await harness.subscribe(conversationId), await harness.subscribe(conversationId)];
    const { turnId } = await harness.postTurn(conversationId, { tokens: 20_000, tokenDelayMs: 1 });
    await watchers[0]!.waitFor(() => (visibleStepTexts(turnEvents(watchers[0]!, turnId)).get(1) ?? '').length > 200);

    await harness.api.post(`/v1/turns/${turnId}/cancel`);
    for (const watcher of watchers) await watcher.waitForTurnEnd(turnId);
    const [kept] = (await storedMessages(conversationId)).filter((message) => message.role === 'assistant');
    expect(kept).toMatchObject({ incomplete: true, content: expect.stringMatching(/^lorem ipsum/) });
    // The worker went on streaming until the cancel fenced it: still, nothing a client got is missing, nothing is extra.
    for (const watcher of watchers) expect(visibleStepTexts(turnEvents(watcher, turnId)).get(1)).toBe(kept.content);
    await checkInvariants(harness.stack.resources.db, { turnIds: [turnId], toolExecutions: [], events: turnEvents(watchers[1]!, turnId) });
  });

  it('keeps what an interrupted step had streamed; the interrupting turn sends it to the model', async () => {
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const text = 'I was about to say that the answer';
    const first = await harness.postTurn(conversationId, { text: `${text} is long.`, stallAfterTokens: tokens(text) });
    await client.waitFor(() => visibleStepTexts(turnEvents(client, first.turnId)).get(1) === text);

    const second = await harness.postTurn(conversationId, { text: 'A fresh answer.' }, { onBusy: 'interrupt' });
    await client.waitForTurnEnd(second.turnId);
    expect(turnEvents(client, first.turnId).at(-1).type).toBe('turn-cancelled');
    expect(turnEvents(client, second.turnId).at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });

    expect((await storedMessages(conversationId)).map((message) => [message.role, message.turnId, message.content, message.incomplete])).toEqual([
      ['user', first.turnId, expect.any(String), undefined],
      ['assistant', first.turnId, text, true],
      ['user', second.turnId, expect.any(String), undefined],
      ['assistant', second.turnId, 'A fresh answer.', undefined],
    ]);
    expect((await harness.api.get(`/v1/turns/${first.turnId}`)).body).toMatchObject({
      finishReason: 'interrupted',
      incompleteMessage: { step: 1, content: text, reasoning: null },
    });
    const sent = sentFrom(harness.providerRequests(second.marker)[0], first.marker);
    expect(sent.map((message: any) => [message.role, message.role === 'assistant' ? message.content : 'input'])).toEqual([
      ['user', 'input'],
      ['assistant', text],
      ['user', 'input'],
    ]);
    await checkInvariants(harness.stack.resources.db, { turnIds: [first.turnId, second.turnId], toolExecutions: [], events: client.events() });
  });

  it('keeps the reasoning of a step stopped before its text, and sends the model nothing of it', async () => {
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const reasoning = 'First, what is being asked';
    const { turnId, marker } = await harness.postTurn(conversationId, { reasoning: `${reasoning} here.`, text: 'never shown', stallAfterTokens: tokens(reasoning) });
    await client.waitFor(
      () =>
        eventsOfType(turnEvents(client, turnId), 'reasoning-delta')
          .map((event) => event.delta)
          .join('') === reasoning,
    );

    await harness.api.post(`/v1/turns/${turnId}/cancel`);
    await client.waitForTurnEnd(turnId);
    const kept = (await storedMessages(conversationId)).at(-1);
    expect(kept).toMatchObject({ role: 'assistant', turnId, content: null, reasoning, incomplete: true });

    const next = await harness.runTurn({ text: 'ok' }, { conversationId });
    expect(next.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    expect(sentFrom(harness.providerRequests(next.marker)[0], marker).map((message: any) => message.role)).toEqual(['user', 'user']);
  });

  it('answers the parallel calls running at the cancel with a cancelled result, keeps their step whole, and the next turn is accepted', async () => {
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const before = server.requests.length;
    const text = 'Looking these up at once.';
    const { turnId, marker } = await harness.postTurn(conversationId, {
      steps: [{ text, toolCalls: [1, 2, 3].map((n) => ({ name: 'stuck', arguments: { n } })) }, { text: 'never' }],
    });
    const running = (await server.waitForRequests(before + 3)).slice(before);
    expect(running.map((request) => request.path)).toEqual(['/stuck', '/stuck', '/stuck']);

    await harness.api.post(`/v1/turns/${turnId}/cancel`);
    for (const request of running) await server.waitForAbort(request, 3_000);
    await client.waitForTurnEnd(turnId);
    expect(visibleStepTexts(turnEvents(client, turnId)).get(1)).toBe(text);

    const messages = (await storedMessages(conversationId)).filter((message) => message.turnId === turnId);
    expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'tool']);
    expect(messages[1]).toMatchObject({ content: text, toolCalls: [expect.anything(), expect.anything(), expect.anything()] });
    expect(messages.some((message) => message.incomplete)).toBe(false);
    for (const message of messages.slice(2)) expect(JSON.parse(message.content)).toMatchObject({ error: { code: 'cancelled' } });
    const turn = (await harness.api.get(`/v1/turns/${turnId}`)).body;
    expect(turn).toMatchObject({ status: 'cancelled', incompleteMessage: null });
    expect(turn.toolCalls.map((call: any) => [call.status, call.error?.code])).toEqual([1, 2, 3].map(() => ['cancelled', 'cancelled']));
    await checkInvariants(harness.stack.resources.db, { turnIds: [turnId], toolExecutions: [], events: client.events() });

    const next = await harness.runTurn({ text: 'Never mind.' }, { conversationId });
    expect(next.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    const sent = sentFrom(harness.providerRequests(next.marker)[0], marker);
    expect(sent.map((message: any) => message.role)).toEqual(['user', 'assistant', 'tool', 'tool', 'tool', 'user']);
    expect(sent[1]).toMatchObject({ content: text, tool_calls: [expect.anything(), expect.anything(), expect.anything()] });
  });

  it('shows the kept text in the chat after a reload, in a replay of the turn, and to the model on the next message (/api/chat)', async () => {
    const chat = new NodeChat({ url: harness.stack.url, token: harness.apiKey, id: `chat-cancel-${Date.now()}` });
    const text = 'Here is the first paragraph of a long answer.';
    const userText = scripted({ text: `${text} And a second one.`, stallAfterTokens: tokens(text) });
    const sending = chat.sendMessage({ text: userText });
    await chat.waitUntil((each) => textOf(each.lastMessage) === text);
    const turnId = chat.lastMessage!.id;
    expect((await harness.api.post(`/v1/turns/${turnId}/cancel`)).body.status).toBe('cancelled');
    await sending;
    expect(chat.lastMessage!.metadata).toEqual({ turnStatus: 'cancelled' });

    // A reload: the stored history, as useChat starts from it.
    const history = (await harness.api.get(`/api/chat/${chat.id}/messages`)).body;
    expect(history.at(-1)).toEqual({
      id: turnId,
      role: 'assistant',
      metadata: { turnStatus: 'cancelled' },
      parts: [{ type: 'step-start' }, { type: 'text', text, state: 'done' }],
    });
    // The same message sent again is the same turn, replayed from its start.
    const userMessage = chat.messages[0]!;
    const replay = await fetch(`${harness.stack.url}/api/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${harness.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: chat.id, messages: [userMessage], trigger: 'submit-message' }),
    });
    const chunks = (await replay.text())
      .split('\n\n')
      .filter((line) => line.startsWith('data: {'))
      .map((line) => JSON.parse(line.slice('data: '.length)));
    expect(chunks[0]).toEqual({ type: 'start', messageId: turnId });
    expect(
      eventsOfType(chunks, 'text-delta')
        .map((chunk) => chunk.delta)
        .join(''),
    ).toBe(text);
    expect(chunks.at(-1)).toEqual({ type: 'abort', reason: 'cancelled' });

    const reloaded = new NodeChat({ url: harness.stack.url, token: harness.apiKey, id: chat.id, messages: history });
    await reloaded.sendMessage({ text: `go on ${scripted({ text: 'Going on.' })}` });
    expect(textOf(reloaded.lastMessage)).toBe('Going on.');
    const [request] = harness.stack.scripted.requests.map((each) => each.body as any).filter((body) => JSON.stringify(body.messages).includes('Going on.'));
    expect(sentFrom(request, 'stallAfterTokens').map((message: any) => [message.role, message.role === 'assistant' ? message.content : 'input'])).toEqual([
      ['user', 'input'],
      ['assistant', text],
      ['user', 'input'],
    ]);
  });

  it("keeps a cancelled response's streamed text as its incomplete message item, and a continuation sends it (/openai/v1/responses)", async () => {
    const client: OpenAI = openAiClient(harness.stack.url, harness.apiKey);
    const text = 'The report begins with three findings';
    const background = await client.responses.create({ input: scripted({ text: `${text} and ends later.`, stallAfterTokens: tokens(text) }), background: true });
    let streamed = '';
    let cancelled = false;
    for await (const event of await client.responses.retrieve(background.id, { stream: true })) {
      if (event.type === 'response.output_text.delta') streamed += event.delta;
      if (streamed === text && !cancelled) cancelled = (await client.responses.cancel(background.id)).status === 'cancelled';
      if (event.type === 'response.incomplete') {
        expect(event.response.output).toEqual([expect.objectContaining({ type: 'message', status: 'incomplete', content: [expect.objectContaining({ text })] })]);
      }
    }
    const retrieved = await client.responses.retrieve(background.id);
    expect(retrieved).toMatchObject({ status: 'cancelled', output_text: text });
    expect(retrieved.output).toEqual([
      expect.objectContaining({ type: 'message', role: 'assistant', status: 'incomplete', content: [expect.objectContaining({ type: 'output_text', text })] }),
    ]);

    const next = await client.responses.create({ input: scripted({ text: 'Continuing.' }), previous_response_id: background.id });
    expect(next).toMatchObject({ status: 'completed', output_text: 'Continuing.' });
    const [request] = harness.stack.scripted.requests.map((each) => each.body as any).filter((body) => JSON.stringify(body.messages).includes('Continuing.'));
    expect(request.messages.map((message: any) => [message.role, message.role === 'assistant' ? message.content : 'input'])).toEqual([
      ['user', 'input'],
      ['assistant', text],
      ['user', 'input'],
    ]);
  });
});
