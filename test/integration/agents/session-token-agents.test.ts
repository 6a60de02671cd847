import { randomBytes } from 'node:crypto';
import { apiClient } from '../../support/http';
import { markedScripted } from '../../support/scripted';
import { startTestStack, type TestStack } from '../../support/stack';

/** docs/API.md, "Agents": a session token picks an agent, sets no configuration of its own, and may be limited to some. */
describe('session tokens and agents', () => {
  let stack: TestStack;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    stack = await startTestStack();
    const user = await stack.createUser(`session-agents-${randomBytes(3).toString('hex')}`);
    api = apiClient(stack.url, user.apiKey);
  });
  afterAll(() => stack.close());

  const makeAgent = async (instructions: string) =>
    (await api.post('/v1/agents', { name: `a-${randomBytes(4).toString('hex')}`, instructions })).body as { id: string; name: string };
  const chatBody = (chatId: string, text: string, agent?: string) => ({
    id: chatId,
    messages: [{ id: `m-${randomBytes(3).toString('hex')}`, role: 'user', parts: [{ type: 'text', text }] }],
    trigger: 'submit-message',
    ...(agent ? { agent } : {}),
  });

  it('refuses a system, a model or tools of its own with a 400 naming the field, on a conversation and on a turn', async () => {
    const session = apiClient(stack.url, (await api.post('/v1/session-tokens', {})).body.token);
    for (const [field, value] of [
      ['system', 'You obey the browser.'],
      ['model', stack.config.LLM_MODEL],
      ['tools', ['calculator']],
    ] as const) {
      const refused = await session.post('/v1/conversations', { [field]: value });
      expect([field, refused.status, refused.body.error.code, refused.body.error.details?.[0]?.field]).toEqual([field, 400, 'invalid_request', field]);
    }
    const conversationId = (await session.post('/v1/conversations', { title: 'plain' })).body.id as string;
    for (const [field, value] of [
      ['model', stack.config.LLM_MODEL],
      ['tools', ['calculator']],
    ] as const) {
      const refused = await session.post(`/v1/conversations/${conversationId}/turns`, { content: 'hi', [field]: value });
      expect([field, refused.status, refused.body.error.details?.[0]?.field]).toEqual([field, 400, field]);
    }
    // The API key still sets them.
    expect((await api.post('/v1/conversations', { system: 'Backend prompt.', tools: ['calculator'] })).status).toBe(201);
  });

  it('limited to agents, runs turns on those only: a conversation, a turn and a chat on another (or on none) are a 403', async () => {
    const allowed = await makeAgent('Allowed prompt.');
    const other = await makeAgent('Other prompt.');
    expect((await api.post('/v1/session-tokens', { agents: ['agent_nope'] })).status).toBe(404);
    const minted = await api.post('/v1/session-tokens', { agents: [allowed.name] });
    expect(minted.status).toBe(201);
    const session = apiClient(stack.url, minted.body.token);

    for (const body of [{}, { agent: other.id }]) {
      const refused = await session.post('/v1/conversations', body);
      expect([refused.status, refused.body.error.code]).toEqual([403, 'forbidden']);
    }
    const own = await session.post('/v1/conversations', { agent: allowed.id });
    expect(own.status).toBe(201);
    const marker = `s-${randomBytes(4).toString('hex')}`;
    expect((await session.post(`/v1/conversations/${own.body.id}/turns`, { content: markedScripted({ text: 'ok' }, marker) })).status).toBe(202);
    const request = await stack.scripted.waitForRequest((recorded) => JSON.stringify(recorded.body).includes(marker));
    expect((request.body as any).messages[0]).toEqual({ role: 'system', content: 'Allowed prompt.' });
    const otherTurn = await session.post(`/v1/conversations/${own.body.id}/turns`, { content: 'hi', agent: other.id, onBusy: 'enqueue' });
    expect([otherTurn.status, otherTurn.body.error.code]).toEqual([403, 'forbidden']);

    // A conversation its backend made on no agent, or on another, takes no turn from it.
    const plain = (await api.post('/v1/conversations', {})).body.id as string;
    const onOther = (await api.post('/v1/conversations', { agent: other.id })).body.id as string;
    for (const conversationId of [plain, onOther]) {
      expect((await session.post(`/v1/conversations/${conversationId}/turns`, { content: 'hi' })).status).toBe(403);
    }

    // The AI SDK route: a new chat names an allowed agent, and an existing chat keeps to it.
    const refusedChat = await session.post('/api/chat', chatBody(`chat-${randomBytes(4).toString('hex')}`, 'hi', other.id));
    expect(refusedChat.status).toBe(403);
    expect((await session.post('/api/chat', chatBody(`chat-${randomBytes(4).toString('hex')}`, 'hi'))).status).toBe(403);
    const chatMarker = `c-${randomBytes(4).toString('hex')}`;
    const chat = await session.post('/api/chat', chatBody(`chat-${randomBytes(4).toString('hex')}`, markedScripted({ text: 'chat ok' }, chatMarker), allowed.id));
    expect(chat.status).toBe(200);
    const chatRequest = await stack.scripted.waitForRequest((recorded) => JSON.stringify(recorded.body).includes(chatMarker));
    expect((chatRequest.body as any).messages[0]).toEqual({ role: 'system', content: 'Allowed prompt.' });
    const otherChatId = `chat-${randomBytes(4).toString('hex')}`;
    await api.post('/api/chat', chatBody(otherChatId, markedScripted({ text: 'x' }, `o-${randomBytes(3).toString('hex')}`), other.id));
    expect((await session.post('/api/chat', chatBody(otherChatId, 'hi'))).status).toBe(403);
  });
});
