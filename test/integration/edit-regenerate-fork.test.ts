import { apiClient } from '../support/http';
import { scripted } from '../support/scripted';
import { startTestStack, type TestStack } from '../support/stack';
import { TestWsClient } from '../support/ws-client';

/** The roles and contents of a conversation's messages, as the model would read them. */
const transcript = (messages: any[]) => messages.map((message) => [message.role, message.content]);

describe('edit, regenerate and fork', () => {
  let stack: TestStack;
  let alice: ReturnType<typeof apiClient>;
  let aliceKey: string;
  let bob: ReturnType<typeof apiClient>;
  let bobKey: string;

  beforeAll(async () => {
    stack = await startTestStack();
    aliceKey = (await stack.createUser('alice')).apiKey;
    alice = apiClient(stack.url, aliceKey);
    bobKey = (await stack.createUser('bob')).apiKey;
    bob = apiClient(stack.url, bobKey);
  });
  afterAll(() => stack.close());

  /** A conversation of alice's with a websocket client following it. */
  async function conversation(body: Record<string, unknown> = {}): Promise<{ id: string; client: TestWsClient }> {
    const created = await alice.post('/v1/conversations', body);
    expect(created.status).toBe(201);
    return { id: created.body.id, client: await TestWsClient.subscribed(stack.url, { apiKey: aliceKey }, created.body.id) };
  }

  async function turn(conversation: { id: string; client: TestWsClient }, body: Record<string, unknown>): Promise<string> {
    const posted = await alice.post(`/v1/conversations/${conversation.id}/turns`, body);
    expect(posted.status).toBe(202);
    const events = await conversation.client.waitForTurnEnd(posted.body.turnId);
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish' });
    return posted.body.turnId;
  }

  /** What the model was sent for the last completion whose last message is `lastContent`'s. */
  function lastRequestEndingWith(lastContent: string): any[] {
    const requests = stack.scripted.requests.filter((request) => (request.body as any).messages.at(-1)?.content === lastContent);
    return (requests.at(-1)!.body as any).messages;
  }

  it('gives every message a stable id and regenerates the last answer, keeping the replaced one', async () => {
    const chat = await conversation();
    const question = scripted({ text: 'first answer' });
    await turn(chat, { content: question });
    const before = (await alice.get(`/v1/conversations/${chat.id}`)).body.messages;
    expect(before.map((message: any) => message.id)).toEqual([expect.stringMatching(/^msg_\d+$/), expect.stringMatching(/^msg_\d+$/)]);

    const regenerated = await turn(chat, { regenerate: true });

    const after = (await alice.get(`/v1/conversations/${chat.id}`)).body;
    expect(transcript(after.messages)).toEqual([
      ['user', question],
      ['assistant', 'first answer'],
    ]);
    // The question keeps its id; the answer is the new turn's.
    expect(after.messages[0].id).toBe(before[0].id);
    expect(after.messages[1].turnId).toBe(regenerated);
    expect(after.messages[1].id).not.toBe(before[1].id);
    expect(after.messages.some((message: any) => 'supersededBy' in message)).toBe(false);

    const all = (await alice.get(`/v1/conversations/${chat.id}?include=superseded`)).body.messages;
    expect(all.map((message: any) => [message.id, message.supersededBy])).toEqual([
      [before[0].id, undefined],
      [before[1].id, regenerated],
      [after.messages[1].id, undefined],
    ]);
    // The model answered the question alone, never the replaced answer.
    expect(transcript(lastRequestEndingWith(question))).toEqual([['user', question]]);
    expect((await alice.get(`/v1/turns/${regenerated}`)).body).toMatchObject({ branch: { kind: 'regenerate', fromMessageId: before[0].id }, supersededBy: null });
    // The turn whose answer it replaced keeps its question on the path: it is not replaced itself.
    expect((await alice.get(`/v1/turns/${before[0].turnId}`)).body).toMatchObject({ branch: null, supersededBy: null });
    // The regenerated turn's events carry on the conversation's seq.
    const events = chat.client.events();
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
    chat.client.close();
  });

  it('edits an earlier message: the model sees the path up to it and the new content, nothing replaced', async () => {
    const chat = await conversation({ system: 'be brief' });
    const first = scripted({ text: 'one' });
    const second = scripted({ text: 'two' });
    await turn(chat, { content: first });
    await turn(chat, { content: second });
    const [firstMessage] = (await alice.get(`/v1/conversations/${chat.id}`)).body.messages;

    const edited = scripted({ text: 'edited answer' });
    const editTurn = await turn(chat, { content: edited, fromMessageId: firstMessage.id });

    const after = (await alice.get(`/v1/conversations/${chat.id}`)).body.messages;
    expect(transcript(after)).toEqual([
      ['user', edited],
      ['assistant', 'edited answer'],
    ]);
    expect(after.every((message: any) => message.turnId === editTurn)).toBe(true);
    expect(transcript(lastRequestEndingWith(edited))).toEqual([
      ['system', 'be brief'],
      ['user', edited],
    ]);
    const all = (await alice.get(`/v1/conversations/${chat.id}?include=superseded`)).body.messages;
    expect(all.map((message: any) => message.supersededBy ?? null)).toEqual([editTurn, editTurn, editTurn, editTurn, null, null]);
    expect((await alice.get(`/v1/turns/${editTurn}`)).body.branch).toEqual({ kind: 'edit', fromMessageId: firstMessage.id });
    expect((await alice.get(`/v1/turns/${firstMessage.turnId}`)).body.supersededBy).toBe(editTurn);
    chat.client.close();
  });

  it('regenerates an earlier user message: it keeps its id, what followed it is replaced', async () => {
    const chat = await conversation();
    const first = scripted({ text: 'one' });
    await turn(chat, { content: first });
    await turn(chat, { content: scripted({ text: 'two' }) });
    const [firstMessage] = (await alice.get(`/v1/conversations/${chat.id}`)).body.messages;

    const again = await turn(chat, { regenerate: true, fromMessageId: firstMessage.id });

    const after = (await alice.get(`/v1/conversations/${chat.id}`)).body.messages;
    expect(after.map((message: any) => [message.id, message.role, message.turnId])).toEqual([
      [firstMessage.id, 'user', firstMessage.turnId],
      [expect.any(String), 'assistant', again],
    ]);
    expect(transcript(lastRequestEndingWith(first))).toEqual([['user', first]]);
    chat.client.close();
  });

  it('refuses a fromMessageId that is not a user message on this path, and changes nothing', async () => {
    const chat = await conversation();
    await turn(chat, { content: scripted({ text: 'one' }) });
    const other = await conversation();
    await turn(other, { content: scripted({ text: 'elsewhere' }) });
    const bobs = (await bob.post('/v1/conversations', {})).body.id;
    const bobClient = await TestWsClient.subscribed(stack.url, { apiKey: bobKey }, bobs);
    const bobTurn = await bob.post(`/v1/conversations/${bobs}/turns`, { content: 'hello' });
    await bobClient.waitForTurnEnd(bobTurn.body.turnId);
    bobClient.close();
    const bobQuestion = (await bob.get(`/v1/conversations/${bobs}`)).body.messages[0];
    const before = await alice.get(`/v1/conversations/${chat.id}?include=superseded`);
    const [question, answer] = before.body.messages;
    const otherQuestion = (await alice.get(`/v1/conversations/${other.id}`)).body.messages[0];
    // Replaced by an edit whose message is not on the path any more.
    const editedAway = await turn(other, { content: scripted({ text: 'new' }), fromMessageId: otherQuestion.id });
    expect(editedAway).toBeDefined();

    const refusals = [
      { regenerate: true, fromMessageId: answer.id },
      { content: 'x', fromMessageId: answer.id },
      { content: 'x', fromMessageId: otherQuestion.id },
      { regenerate: true, fromMessageId: bobQuestion.id },
      { content: 'x', fromMessageId: 'msg_99999999999' },
      { content: 'x', fromMessageId: 'not-an-id' },
    ];
    for (const body of refusals) {
      const refused = await alice.post(`/v1/conversations/${chat.id}/turns`, { ...body, onBusy: 'interrupt' });
      expect([body, refused.status, refused.body.error.code, refused.body.error.details]).toEqual([
        body,
        400,
        'invalid_request',
        [{ field: 'fromMessageId', message: expect.stringContaining("not a user message on this conversation's path") }],
      ]);
    }
    // The superseded message of the other conversation is refused on its own path too.
    const replaced = await alice.post(`/v1/conversations/${other.id}/turns`, { regenerate: true, fromMessageId: otherQuestion.id });
    expect(replaced.status).toBe(400);

    const both = await alice.post(`/v1/conversations/${chat.id}/turns`, { regenerate: true, content: 'x' });
    expect(both.status).toBe(400);
    expect(both.body.error.details).toEqual([{ field: 'content', message: expect.stringContaining('leave content out') }]);
    const empty = await conversation();
    const nothing = await alice.post(`/v1/conversations/${empty.id}/turns`, { regenerate: true });
    expect(nothing.status).toBe(400);
    expect(nothing.body.error.details).toEqual([{ field: 'regenerate', message: 'the conversation has no user message to answer again' }]);
    // Bob cannot regenerate alice's conversation: it is not his.
    expect((await bob.post(`/v1/conversations/${chat.id}/turns`, { regenerate: true })).status).toBe(404);

    const after = await alice.get(`/v1/conversations/${chat.id}?include=superseded`);
    expect(after.body).toEqual(before.body);
    expect(question.role).toBe('user');
    chat.client.close();
    other.client.close();
    empty.client.close();
  });

  it('follows onBusy: reject refuses, interrupt cancels the running turn, enqueue runs after it and replaces its answer', async () => {
    const chat = await conversation();
    const slow = scripted({ tokens: 400, tokenDelayMs: 5 });
    const running = await alice.post(`/v1/conversations/${chat.id}/turns`, { content: slow });
    await chat.client.waitFor((frame) => frame.type === 'event' && frame.event.type === 'text-delta' && frame.event.turnId === running.body.turnId);

    const rejected = await alice.post(`/v1/conversations/${chat.id}/turns`, { regenerate: true });
    expect(rejected.status).toBe(409);
    expect(rejected.body.error.code).toBe('conversation_busy');

    // Interrupt: the running turn is cancelled and its question answered again.
    const interrupting = await alice.post(`/v1/conversations/${chat.id}/turns`, { regenerate: true, onBusy: 'interrupt' });
    expect(interrupting.status).toBe(202);
    await chat.client.waitFor((frame) => frame.type === 'event' && frame.event.type === 'turn-cancelled' && frame.event.turnId === running.body.turnId);
    await chat.client.waitFor((frame) => frame.type === 'event' && frame.event.type === 'text-delta' && frame.event.turnId === interrupting.body.turnId);

    // Enqueue: it waits for the running one, then replaces that one's answer.
    const queued = await alice.post(`/v1/conversations/${chat.id}/turns`, { regenerate: true, onBusy: 'enqueue' });
    expect(queued.status).toBe(202);
    const events = await chat.client.waitForTurnEnd(queued.body.turnId, 60_000);
    const finishOfAhead = events.findIndex((event) => event.turnId === interrupting.body.turnId && event.type === 'turn-finish');
    const startOfQueued = events.findIndex((event) => event.turnId === queued.body.turnId && event.type === 'turn-start');
    expect(finishOfAhead).toBeGreaterThan(-1);
    expect(startOfQueued).toBeGreaterThan(finishOfAhead);
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));

    const path = (await alice.get(`/v1/conversations/${chat.id}`)).body.messages;
    expect(path.map((message: any) => [message.role, message.turnId])).toEqual([
      ['user', running.body.turnId],
      ['assistant', queued.body.turnId],
    ]);
    const all = (await alice.get(`/v1/conversations/${chat.id}?include=superseded`)).body.messages;
    expect(all.filter((message: any) => message.turnId === interrupting.body.turnId).map((message: any) => message.supersededBy)).toEqual([queued.body.turnId]);
    chat.client.close();
  });

  it('answers the same edit with the same idempotencyKey once', async () => {
    const chat = await conversation();
    await turn(chat, { content: scripted({ text: 'one' }) });
    const [question] = (await alice.get(`/v1/conversations/${chat.id}`)).body.messages;
    const body = { content: scripted({ text: 'edited' }), fromMessageId: question.id, idempotencyKey: 'edit-1' };
    const [a, b] = await Promise.all([alice.post(`/v1/conversations/${chat.id}/turns`, body), alice.post(`/v1/conversations/${chat.id}/turns`, body)]);
    expect([a.status, b.status].sort()).toEqual([200, 202]);
    expect(a.body.turnId).toBe(b.body.turnId);
    await chat.client.waitForTurnEnd(a.body.turnId);
    const again = await alice.post(`/v1/conversations/${chat.id}/turns`, body);
    expect([again.status, again.body.turnId]).toEqual([200, a.body.turnId]);
    expect((await alice.get(`/v1/conversations/${chat.id}`)).body.messages.map((message: any) => message.turnId)).toEqual([a.body.turnId, a.body.turnId]);
    chat.client.close();
  });

  it('keeps the answered message in a bounded window (maxHistoryMessages) of a regenerate', async () => {
    const chat = await conversation();
    const question = scripted({ steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] }, { text: 'done' }] });
    await turn(chat, { content: question });
    await turn(chat, { regenerate: true, maxHistoryMessages: 1 });
    const requests = stack.scripted.requests.filter((request) => (request.body as any).messages.some((message: any) => message.content === question));
    // The regenerate's second step: its question, its own call and result, nothing replaced.
    const last = (requests.at(-1)!.body as any).messages;
    expect(last.map((message: any) => message.role)).toEqual(['user', 'assistant', 'tool']);
    chat.client.close();
  });

  it('forks the path up to a message into a new conversation', async () => {
    const chat = await conversation({ system: 'be brief', title: 'source' });
    const first = scripted({ text: 'one' });
    await turn(chat, { content: first });
    await turn(chat, { content: scripted({ text: 'two' }) });
    const source = (await alice.get(`/v1/conversations/${chat.id}`)).body;

    const forked = await alice.post(`/v1/conversations/${chat.id}/fork`, { messageId: source.messages[1].id });
    expect(forked.status).toBe(201);
    expect(forked.body).toMatchObject({ title: 'source', system: 'be brief', externalId: null, forkedFrom: { conversationId: chat.id, messageId: source.messages[1].id } });
    expect(forked.body.id).not.toBe(chat.id);
    const copy = (await alice.get(`/v1/conversations/${forked.body.id}`)).body;
    expect(transcript(copy.messages)).toEqual(transcript(source.messages.slice(0, 2)));
    expect(copy.messages.map((message: any) => message.id)).not.toEqual(source.messages.slice(0, 2).map((message: any) => message.id));

    // The fork goes on by itself; the source is untouched.
    const fork = { id: forked.body.id, client: await TestWsClient.subscribed(stack.url, { apiKey: aliceKey }, forked.body.id) };
    const next = scripted({ text: 'three' });
    await turn(fork, { content: next });
    expect(transcript(lastRequestEndingWith(next))).toEqual([['system', 'be brief'], ...transcript(source.messages.slice(0, 2)), ['user', next]]);
    expect((await alice.get(`/v1/conversations/${chat.id}`)).body.messages).toEqual(source.messages);

    // Not on the path, or not yours.
    await turn(chat, { regenerate: true });
    const replaced = await alice.post(`/v1/conversations/${chat.id}/fork`, { messageId: source.messages[3].id });
    expect([replaced.status, replaced.body.error.code]).toEqual([400, 'invalid_request']);
    expect((await bob.post(`/v1/conversations/${chat.id}/fork`, { messageId: source.messages[1].id })).status).toBe(404);
    expect((await alice.post(`/v1/conversations/${chat.id}/fork`, {})).status).toBe(400);
    chat.client.close();
    fork.client.close();
  });
});
