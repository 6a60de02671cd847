import { lastAssistantMessageIsCompleteWithApprovalResponses, lastAssistantMessageIsCompleteWithToolCalls } from 'ai';
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
        'bank.json': [transferTool(server.url), { name: 'lookup', description: 'Reads the balance', url: `${server.url}/lookup`, timeoutMs: 2000, retries: 0 }],
        // Run by the browser, and only once a person said yes.
        'browser.json': {
          kind: 'client',
          name: 'sign',
          description: 'Signs a document in the browser',
          timeoutMs: 20_000,
          needsApproval: true,
          fields: [{ name: 'doc', required: true }],
        },
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
    const scenario = {
      steps: [
        {
          toolCalls: [
            { name: 'transfer', arguments: { to, amount: 5 } },
            { name: 'lookup', arguments: {} },
          ],
        },
        { text: answer },
      ],
    };
    await chat.sendMessage({ text: `${to} ${scripted(scenario)}` });
    expect({ status: chat.status, error: chat.error?.message }).toEqual({ status: 'ready', error: undefined });
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
      body: JSON.stringify({
        id: chat.id,
        messages: [
          chat.messages[0],
          { ...message, parts: message.parts.map((part: any) => (part.approval ? { ...part, state: 'approval-responded', approval: { id: approvalId, approved: true } } : part)) },
        ],
      }),
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
    expect({ status: replay.status, error: replay.error?.message }).toEqual({ status: 'ready', error: undefined });
    expect(replay.assistantMessages).toEqual(first.assistantMessages);

    // Deciding from the reloaded page continues the same turn there.
    await reloaded.addToolApprovalResponse({ id: approvalId, approved: true });
    await reloaded.waitUntil((each) => each.status === 'ready' && textOf(each.lastMessage) === 'Sent 5 to cy.');
    expect(transfersTo('cy')).toHaveLength(1);
    expect(reloaded.assistantMessages).toHaveLength(1);
  });

  it("refuses a decision on a call that needs none, or an approval id that is not the call's, and runs nothing", async () => {
    const chat = newChat();
    const { message } = await askToTransfer(chat, 'dee', 'Sent.');
    const post = (parts: unknown[]) => harness.api.post('/api/chat', { id: chat.id, messages: [chat.messages[0], { id: message.id, role: 'assistant', parts }] });
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

  describe('a client tool that needs approval', () => {
    /**
     * A chat whose browser runs `sign` in onToolCall (recording each run; `answers: false`, a page
     * closed before it answered) and sends when either kind of answer completes the step.
     */
    function signingChat(options: Partial<ConstructorParameters<typeof NodeChat>[0]> = {}, answers = true) {
      const runs: { toolCallId: string; input: unknown; stateThen: string | undefined }[] = [];
      const chat: NodeChat = newChat({
        sendAutomaticallyWhen: (each) => lastAssistantMessageIsCompleteWithToolCalls(each) || lastAssistantMessageIsCompleteWithApprovalResponses(each),
        onToolCall: ({ toolCall }) => {
          const decided = toolPartsOf(chat.lastMessage).find((part) => part.toolCallId === toolCall.toolCallId)?.approval;
          runs.push({ toolCallId: toolCall.toolCallId, input: toolCall.input, stateThen: decided?.approved === true ? 'approved' : undefined });
          if (answers) void chat.addToolOutput({ tool: 'sign', toolCallId: toolCall.toolCallId, output: { signed: (toolCall.input as { doc: string }).doc } });
        },
        ...options,
      });
      return { chat, runs };
    }

    async function askToSign(chat: NodeChat, doc: string, answer: string) {
      const scenario = {
        steps: [
          {
            toolCalls: [
              { name: 'sign', arguments: { doc } },
              { name: 'lookup', arguments: {} },
            ],
          },
          { text: answer },
        ],
      };
      await chat.sendMessage({ text: `${doc} ${scripted(scenario)}` });
      expect({ status: chat.status, error: chat.error?.message }).toEqual({ status: 'ready', error: undefined });
      const message = chat.lastMessage!;
      const [sign, lookup] = toolPartsOf(message);
      expect(sign).toMatchObject({ type: 'tool-sign', state: 'approval-requested', input: { doc }, approval: { id: expect.any(String) } });
      expect(sign.providerExecuted).toBeUndefined();
      expect(lookup).toMatchObject({ state: 'output-available', output: { balance: 12 } });
      expect(message.metadata).toEqual({ turnStatus: 'waiting_approval' });
      return { message, toolCallId: sign.toolCallId as string, approvalId: sign.approval.id as string };
    }

    it('approves: the browser runs it once, after the approval, and the same turn completes in the same assistant message', async () => {
      const { chat, runs } = signingChat();
      const { message, toolCallId, approvalId } = await askToSign(chat, 'lease-1', 'Signed lease-1.');
      // Asked for a decision, not run: onToolCall has not been called.
      expect(runs).toEqual([]);

      await chat.addToolApprovalResponse({ id: approvalId, approved: true });
      await chat.waitUntil((each) => each.status === 'ready' && textOf(each.lastMessage) === 'Signed lease-1.');
      expect(chat.error).toBeUndefined();
      expect(runs).toEqual([{ toolCallId, input: { doc: 'lease-1' }, stateThen: 'approved' }]);
      expect(chat.assistantMessages).toHaveLength(1);
      expect(chat.lastMessage!.id).toBe(message.id);
      expect(toolPartsOf(chat.lastMessage)[0]).toMatchObject({ state: 'output-available', output: { signed: 'lease-1' }, approval: { id: approvalId, approved: true } });
      expect(chat.lastMessage!.metadata).toEqual({ turnStatus: 'completed' });
      const turn = (await harness.api.get(`/v1/turns/${message.id}`)).body;
      expect(turn).toMatchObject({
        status: 'completed',
        toolCalls: expect.arrayContaining([expect.objectContaining({ toolCallId, kind: 'client', status: 'succeeded', result: { signed: 'lease-1' } })]),
      });
      const requests = harness.providerRequests('lease-1');
      expect(
        requests
          .at(-1)
          .messages.filter((each: any) => each.role === 'tool')
          .map((each: any) => JSON.parse(each.content)),
      ).toContainEqual({ signed: 'lease-1' });
      expect(await history(chat.id)).toEqual(asJson(chat.assistantMessages));
    });

    it('denies: the browser never runs it, the part becomes output-denied and the model answers the denial', async () => {
      const { chat, runs } = signingChat();
      const { message, approvalId } = await askToSign(chat, 'lease-2', 'Not signed.');
      await chat.addToolApprovalResponse({ id: approvalId, approved: false, reason: 'wrong lease' });
      await chat.waitUntil((each) => each.status === 'ready' && textOf(each.lastMessage) === 'Not signed.');
      expect(runs).toEqual([]);
      expect(chat.assistantMessages).toHaveLength(1);
      expect(toolPartsOf(chat.lastMessage)[0]).toMatchObject({ state: 'output-denied', approval: { id: approvalId, approved: false, reason: 'wrong lease' } });
      const requests = harness.providerRequests('lease-2');
      expect(
        requests
          .at(-1)
          .messages.filter((each: any) => each.role === 'tool')
          .map((each: any) => JSON.parse(each.content)),
      ).toContainEqual({
        error: expect.objectContaining({ code: 'denied', message: 'wrong lease' }),
      });
      expect((await harness.api.get(`/v1/turns/${message.id}`)).body.status).toBe('completed');
      expect(await history(chat.id)).toEqual(asJson(chat.assistantMessages));
    });

    it('shows a reloaded page where the call stands: awaiting the decision, then approved and asked of the browser', async () => {
      // This page decides, and is gone before it answers: the call stays asked after the approval.
      const { chat: first, runs: firstRuns } = signingChat({}, false);
      const { message, toolCallId, approvalId } = await askToSign(first, 'lease-3', 'Signed lease-3.');
      const reload = async () => (await harness.api.get(`/api/chat/${first.id}/messages`)).body;
      expect(toolPartsOf((await reload()).at(-1))[0]).toMatchObject({ toolCallId, state: 'approval-requested', approval: { id: approvalId } });
      expect(await history(first.id)).toEqual(asJson(first.assistantMessages));

      await first.addToolApprovalResponse({ id: approvalId, approved: true });
      await first.waitUntil((each) => each.status === 'ready' && toolPartsOf(each.lastMessage)[0]?.state === 'input-available');
      expect(first.lastMessage!.metadata).toEqual({ turnStatus: 'waiting_tools' });
      expect((await harness.api.get(`/v1/turns/${message.id}`)).body.status).toBe('waiting_tools');
      // Live, the part went on to input-available (the AI SDK keeps its approval there, a state its types do not name).
      expect(toolPartsOf((await reload()).at(-1))[0]).toMatchObject({ toolCallId, state: 'approval-responded', approval: { id: approvalId, approved: true } });
      expect(firstRuns).toEqual([{ toolCallId, input: { doc: 'lease-3' }, stateThen: 'approved' }]);

      // A reloaded page resumes the turn: the approved call is asked of it (not for approval again), it runs it, and the turn completes.
      const { chat: reloaded, runs } = signingChat({ id: first.id, messages: (await reload()).slice(0, 1) });
      await reloaded.resumeStream();
      await reloaded.waitUntil((each) => each.status === 'ready' && textOf(each.lastMessage) === 'Signed lease-3.');
      expect(runs).toEqual([{ toolCallId, input: { doc: 'lease-3' }, stateThen: undefined }]);
      expect(reloaded.assistantMessages).toHaveLength(1);
      expect(toolPartsOf(reloaded.lastMessage)[0]).toMatchObject({ state: 'output-available', output: { signed: 'lease-3' } });
      expect((await harness.api.get(`/v1/turns/${message.id}`)).body.status).toBe('completed');
    });
  });
});
