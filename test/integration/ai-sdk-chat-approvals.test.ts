import { lastAssistantMessageIsCompleteWithApprovalResponses } from 'ai';
import { NodeChat, textOf, toolPartsOf } from '../support/ai-sdk-chat';
import { transferTool } from '../support/approval-tools';
import { startToolHttpServer, type ToolHttpServer } from '../support/tool-servers';
import { startToolTurnHarness, scripted, type ToolTurnHarness } from '../support/tool-turns';

/** Tool approvals over `/api/chat`, driven by the AI SDK's own chat logic (what `useChat` runs). */
describe('AI SDK routes: tool approvals with addToolApprovalResponse', () => {
  let server: ToolHttpServer;
  let harness: ToolTurnHarness;
  let chatCount = 0;
  const newChat = (options: Partial<ConstructorParameters<typeof NodeChat>[0]> = {}) =>
    new NodeChat({
      url: harness.stack.url,
      token: harness.apiKey,
      id: `approval-chat-${Date.now()}-${chatCount++}`,
      sendAutomaticallyWhen: lastAssistantMessageIsCompleteWithApprovalResponses,
      ...options,
    });

  beforeAll(async () => {
    server = await startToolHttpServer();
    server.route('/transfer', (request) => ({ body: { done: true, sent: request.body } }));
    // Slower than the approval request: the stream must not end while it runs.
    server.route('/lookup', { body: { balance: 12 }, delayMs: 300 });
    harness = await startToolTurnHarness({
      toolFiles: {
        'bank.json': [
          transferTool(server.url),
          { name: 'lookup', description: 'Reads the balance', url: `${server.url}/lookup`, timeoutMs: 2000, retries: 0 },
        ],
      },
    });
  });
  afterAll(async () => {
    await harness.close();
    await server.close();
  });

  const transfersTo = (to: string) => server.requests.filter((request) => request.path === '/transfer' && (request.body as any)?.to === to);
  const history = async (chatId: string) => (await harness.api.get(`/api/chat/${chatId}/messages`)).body.filter((message: any) => message.role === 'assistant');
  const asJson = (value: unknown) => JSON.parse(JSON.stringify(value));

  /** Sends a message whose first step calls `transfer` to `to` and `lookup`; resolves when the stream ended waiting for the approval. */
  async function askToTransfer(chat: NodeChat, to: string, answer: string) {
    const scenario = { steps: [{ toolCalls: [{ name: 'transfer', arguments: { to, amount: 5 } }, { name: 'lookup', arguments: {} }] }, { text: answer }] };
    await chat.sendMessage({ text: `${to} ${scripted(scenario)}` });
    expect(chat.status).toBe('ready');
    expect(chat.error).toBeUndefined();
    const message = chat.lastMessage!;
    const [transfer, lookup] = toolPartsOf(message);
    expect(transfer).toMatchObject({ type: 'tool-transfer', state: 'approval-requested', input: { to, amount: 5 }, providerExecuted: true, approval: { id: expect.any(String) } });
    // The step's other call ran meanwhile, and had settled when the stream ended.
    expect(lookup).toMatchObject({ type: 'tool-lookup', state: 'output-available', output: { balance: 12 } });
    expect(message.metadata).toEqual({ turnStatus: 'waiting_approval' });
    expect(transfersTo(to)).toHaveLength(0);
    return { message, approvalId: transfer.approval.id as string };
  }

  it('approves: the call runs once and the answer streams into the same assistant message; the history equals it at every point', async () => {
    const chat = newChat();
    const { message, approvalId } = await askToTransfer(chat, 'ann', 'Sent 5 to ann.');
    // A reload while it waits shows the pending approval, as the live stream left it.
    expect(await history(chat.id)).toEqual(asJson(chat.assistantMessages));
    expect((await harness.api.get(`/v1/turns/${message.id}`)).body.status).toBe('waiting_approval');

    await chat.addToolApprovalResponse({ id: approvalId, approved: true });
    await chat.waitUntil((each) => each.status === 'ready' && textOf(each.lastMessage) === 'Sent 5 to ann.');
    expect(chat.error).toBeUndefined();
    expect(chat.assistantMessages).toHaveLength(1);
    expect(chat.lastMessage!.id).toBe(message.id);
    expect(toolPartsOf(chat.lastMessage)[0]).toMatchObject({
      state: 'output-available',
      output: { done: true, sent: { to: 'ann', amount: 5 } },
      approval: { id: approvalId, approved: true },
    });
    expect(chat.lastMessage!.metadata).toEqual({ turnStatus: 'completed' });
    expect(transfersTo('ann')).toHaveLength(1);
    expect(await history(chat.id)).toEqual(asJson(chat.assistantMessages));

    // The same decision again (a resend, another tab) is taken as it stands: nothing runs twice.
    const again = await fetch(`${harness.stack.url}/api/chat`, {
      method: 'POST',
      headers: { authorization: `Bearer ${harness.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ id: chat.id, messages: [chat.messages[0], { ...message, parts: message.parts.map((part: any) => (part.approval ? { ...part, state: 'approval-responded', approval: { id: approvalId, approved: true } } : part)) }] }),
    });
    expect(again.status).toBe(200);
    await again.text();
    expect(transfersTo('ann')).toHaveLength(1);
  });

  it('denies: the part becomes output-denied, the tool is never called, and the model answers the denial', async () => {
    const chat = newChat();
    const { message, approvalId } = await askToTransfer(chat, 'bob', 'I did not send it.');
    await chat.addToolApprovalResponse({ id: approvalId, approved: false, reason: 'not today' });
    await chat.waitUntil((each) => each.status === 'ready' && textOf(each.lastMessage) === 'I did not send it.');
    expect(chat.assistantMessages).toHaveLength(1);
    expect(toolPartsOf(chat.lastMessage)[0]).toMatchObject({ state: 'output-denied', approval: { id: approvalId, approved: false, reason: 'not today' } });
    expect(transfersTo('bob')).toHaveLength(0);
    const requests = harness.providerRequests('bob');
    const toolMessages = requests[requests.length - 1].messages.filter((each: any) => each.role === 'tool');
    expect(toolMessages.map((each: any) => JSON.parse(each.content))).toEqual(
      expect.arrayContaining([{ error: expect.objectContaining({ code: 'denied', message: 'not today' }) }]),
    );
    expect(await history(chat.id)).toEqual(asJson(chat.assistantMessages));
    expect((await harness.api.get(`/v1/turns/${message.id}`)).body.status).toBe('completed');
  });

  it('shows the pending approval to a reloaded page: from the history, and replayed by GET /api/chat/:id/stream', async () => {
    const first = newChat();
    const { approvalId } = await askToTransfer(first, 'cy', 'Sent 5 to cy.');

    // A reload: the page starts from the stored history and resumes the active turn.
    const reloaded = newChat({ id: first.id, messages: (await harness.api.get(`/api/chat/${first.id}/messages`)).body });
    expect(toolPartsOf(reloaded.lastMessage)[0]).toMatchObject({ state: 'approval-requested', approval: { id: approvalId } });
    const replay = newChat({ id: first.id, messages: reloaded.messages.slice(0, 1) });
    await replay.resumeStream();
    expect(replay.status).toBe('ready');
    expect(replay.assistantMessages).toEqual(first.assistantMessages);

    // Deciding from the reloaded page continues the same turn there.
    await reloaded.addToolApprovalResponse({ id: approvalId, approved: true });
    await reloaded.waitUntil((each) => each.status === 'ready' && textOf(each.lastMessage) === 'Sent 5 to cy.');
    expect(transfersTo('cy')).toHaveLength(1);
    expect(reloaded.assistantMessages).toHaveLength(1);
  });

  it('refuses a decision on a call that needs none, or an approval id that is not the call\'s, and runs nothing', async () => {
    const chat = newChat();
    const { message } = await askToTransfer(chat, 'dee', 'Sent.');
    const post = (parts: unknown[]) =>
      harness.api.post('/api/chat', { id: chat.id, messages: [chat.messages[0], { id: message.id, role: 'assistant', parts }] });
    const [transfer, lookup] = toolPartsOf(message);
    const wrongId = await post([{ ...transfer, state: 'approval-responded', approval: { id: 'appr_not_this', approved: true } }]);
    expect([wrongId.status, wrongId.body.error.code]).toEqual([400, 'invalid_request']);
    const notGated = await post([{ ...lookup, state: 'approval-responded', approval: { id: 'appr_x', approved: true } }]);
    expect([notGated.status, notGated.body.error.code]).toEqual([400, 'invalid_request']);
    const malformed = await post([{ ...transfer, state: 'approval-responded', approval: { id: transfer.approval.id } }]);
    expect([malformed.status, malformed.body.error.code]).toEqual([400, 'invalid_request']);
    expect(transfersTo('dee')).toHaveLength(0);
    expect((await harness.api.get(`/v1/turns/${message.id}`)).body.status).toBe('waiting_approval');
  });
});
