import type { UIMessage } from 'ai';
import { NodeChat, textOf } from '../support/ai-sdk-chat';
import { markedScripted } from '../support/scripted';
import { startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';

/** `regenerate()` and `sendMessage` with an earlier message's id, driven by the AI SDK's own chat logic. */
describe('AI SDK routes: regenerate and edit', () => {
  let harness: ToolTurnHarness;
  let chatCount = 0;
  // The playground's transport: only the last message is sent (stored history wins).
  const lastOnly = ({ id, messages, trigger, messageId }: { id: string; messages: UIMessage[]; trigger: string; messageId: string | undefined }) => ({
    body: { id, messages: messages.slice(-1), trigger, messageId },
  });
  const newChat = (options: { id?: string; messages?: UIMessage[]; sendAll?: boolean } = {}) =>
    new NodeChat({
      url: harness.stack.url,
      token: harness.apiKey,
      id: options.id ?? `edit-chat-${Date.now()}-${chatCount++}`,
      ...(options.messages ? { messages: options.messages } : {}),
      ...(options.sendAll ? {} : { prepareSendMessagesRequest: lastOnly }),
    });

  beforeAll(async () => {
    harness = await startToolTurnHarness();
  });
  afterAll(() => harness.close());

  const ready = (chat: NodeChat) => expect({ status: chat.status, error: chat.error?.message }).toEqual({ status: 'ready', error: undefined });
  const shown = (messages: UIMessage[]) => messages.map((message) => [message.role, textOf(message)]);
  const stored = async (chatId: string): Promise<UIMessage[]> => (await harness.api.get(`/api/chat/${encodeURIComponent(chatId)}/messages`)).body;

  it('regenerate() replaces the last answer with a new turn; the stream and the stored history agree', async () => {
    for (const sendAll of [false, true]) {
      const chat = newChat({ sendAll });
      const question = markedScripted({ text: 'an answer' });
      await chat.sendMessage({ text: question });
      const firstTurn = chat.lastMessage!.id;

      await chat.regenerate();
      ready(chat);
      expect(shown(chat.messages)).toEqual([
        ['user', question],
        ['assistant', 'an answer'],
      ]);
      const secondTurn = chat.lastMessage!.id;
      expect(secondTurn).not.toBe(firstTurn);
      expect((await harness.api.get(`/v1/turns/${secondTurn}`)).body).toMatchObject({ status: 'completed' });

      // A reload shows the same path: the question of the first turn, the answer of the second.
      const history = await stored(chat.id);
      expect(shown(history)).toEqual(shown(chat.messages));
      expect(history.map((message) => message.id)).toEqual([`${firstTurn}:user`, secondTurn]);
      // The model answered the question alone, not the replaced answer.
      const marker = question.split(' ')[0]!;
      expect(
        harness
          .providerRequests(marker)
          .at(-1)
          .messages.map((message: any) => message.role),
      ).toEqual(['user']);
    }
  });

  it('sendMessage with an earlier message id edits it: what followed is replaced, before and after a reload', async () => {
    const chat = newChat();
    const first = markedScripted({ text: 'first answer' });
    await chat.sendMessage({ text: first });
    await chat.sendMessage({ text: markedScripted({ text: 'second answer' }) });
    const firstUserId = chat.messages[0]!.id;

    const edited = markedScripted({ text: 'edited answer' });
    await chat.sendMessage({ text: edited, messageId: firstUserId });
    ready(chat);
    expect(shown(chat.messages)).toEqual([
      ['user', edited],
      ['assistant', 'edited answer'],
    ]);
    const editTurn = chat.lastMessage!.id;
    expect(shown(await stored(chat.id))).toEqual(shown(chat.messages));
    expect(
      harness
        .providerRequests(edited.split(' ')[0]!)
        .at(-1)
        .messages.map((message: any) => [message.role, message.content]),
    ).toEqual([['user', edited]]);

    // The same message edited again by the id the client still gives it.
    const again = markedScripted({ text: 'edited twice' });
    await chat.sendMessage({ text: again, messageId: firstUserId });
    ready(chat);
    expect(shown(chat.messages)).toEqual([
      ['user', again],
      ['assistant', 'edited twice'],
    ]);

    // After a reload, by the ids the stored history gives: an edit, then a regenerate.
    const reloaded = newChat({ id: chat.id, messages: await stored(chat.id) });
    expect(reloaded.messages[0]!.id).toBe(`${reloaded.messages[1]!.id}:user`);
    await reloaded.sendMessage({ text: markedScripted({ text: 'three' }) });
    const third = markedScripted({ text: 'edited after reload' });
    await reloaded.sendMessage({ text: third, messageId: reloaded.messages[2]!.id });
    ready(reloaded);
    await reloaded.regenerate();
    ready(reloaded);
    expect(shown(reloaded.messages)).toEqual([
      ['user', again],
      ['assistant', 'edited twice'],
      ['user', third],
      ['assistant', 'edited after reload'],
    ]);
    expect(shown(await stored(chat.id))).toEqual(shown(reloaded.messages));
    expect((await stored(chat.id)).map((message) => message.id)).toEqual(reloaded.messages.map((message, index) => (index === 2 ? expect.stringMatching(/:user$/) : message.id)));
    expect(editTurn).not.toBe(chat.lastMessage!.id);
  });

  it("refuses to regenerate or edit a message that is not on the chat's path, changing nothing", async () => {
    const chat = newChat();
    await chat.sendMessage({ text: markedScripted({ text: 'kept' }) });
    const before = await stored(chat.id);
    const bodies = [
      { id: chat.id, messages: [{ id: 'unknown', role: 'user', parts: [{ type: 'text', text: 'x' }] }], trigger: 'regenerate-message' },
      { id: chat.id, messages: [{ id: 'unknown', role: 'user', parts: [{ type: 'text', text: 'x' }] }], trigger: 'submit-message', messageId: 'unknown' },
      { id: `never-used-${Date.now()}`, messages: [{ id: 'u', role: 'user', parts: [{ type: 'text', text: 'x' }] }], trigger: 'regenerate-message' },
    ];
    for (const body of bodies) {
      const refused = await harness.api.post('/api/chat', body);
      expect([refused.status, refused.body.error.code, refused.body.error.message]).toEqual([
        400,
        'invalid_request',
        expect.stringContaining("not a user message on this chat's path"),
      ]);
    }
    expect(await stored(chat.id)).toEqual(before);
  });
});
