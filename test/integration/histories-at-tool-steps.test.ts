import { startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';
import { isEvent, type TestWsClient } from '../support/ws-client';

const confirmTool = { kind: 'client', name: 'confirm', description: 'Asks the user to confirm', timeoutMs: 300_000, fields: [{ name: 'question', required: true }] };

const calculator = (expression: string) => ({ name: 'calculator', arguments: { expression } });
const randomNumber = { name: 'random_number', arguments: { min: 1, max: 6 } };
const confirm = { name: 'confirm', arguments: { question: 'Go?' } };

/**
 * A question whose first answer calls `calls` in one step and says "done" after their results;
 * asked again with the same history (a regenerate), it answers without tools.
 */
const askingOnce = (calls: unknown[]) => ({ steps: [{ attempts: [{ toolCalls: calls }, { text: 'answered again' }] }, { text: 'done' }] });

/** The roles of a path, each tool message with the call it answers. */
const shape = (messages: any[]) => messages.map((message) => (message.role === 'tool' ? `tool ${message.toolCallId ?? message.tool_call_id}` : message.role));

/**
 * A fork, an edit or a regenerate at any point of a tool exchange (docs/RELIABILITY.md, case 45):
 * the new history is one the provider accepts (the scripted model refuses what OpenAI refuses:
 * a turn on a broken history fails), or the request is refused with a 4xx and changes nothing.
 */
describe('forks, edits and regenerates at a tool step', () => {
  let harness: ToolTurnHarness;

  beforeAll(async () => {
    harness = await startToolTurnHarness({ toolFiles: { 'client.json': [confirmTool] } });
  });
  afterAll(() => harness.close());

  const pathOf = async (conversationId: string): Promise<any[]> => (await harness.api.get(`/v1/conversations/${conversationId}`)).body.messages;
  const fork = (conversationId: string, messageId: string) => harness.api.post(`/v1/conversations/${conversationId}/fork`, { messageId });
  const conversationCount = async () => (await harness.api.get('/v1/conversations?limit=100')).body.data.length;

  /** Runs a turn on the conversation: it must complete, so the model took its history. What the model was sent last. */
  async function nextTurnCompletes(conversationId: string): Promise<any[]> {
    const run = await harness.runTurn({ text: 'next answer' }, { conversationId });
    expect(run.events.at(-1)).toMatchObject({ type: 'turn-finish' });
    return harness.providerRequests(run.marker).at(-1)!.messages;
  }

  /** A turn whose first step calls `calls`, parked on them (an approval, a client's answer). */
  async function parkedTurn(calls: unknown[]): Promise<{ conversationId: string; client: TestWsClient; turnId: string; marker: string }> {
    const conversationId = await harness.newConversation({ requireApproval: ['random_number'] });
    const client = await harness.subscribe(conversationId);
    const { turnId, marker } = await harness.postTurn(conversationId, askingOnce(calls));
    await client.waitFor(isEvent('turn-waiting', turnId));
    return { conversationId, client, turnId, marker };
  }

  async function expectForkRefused(conversationId: string, messageId: string, callIds: string[]): Promise<void> {
    const before = await conversationCount();
    const refused = await fork(conversationId, messageId);
    expect(refused.status).toBe(409);
    expect(refused.body.error).toMatchObject({
      code: 'conflict',
      details: [{ field: 'messageId', message: expect.stringContaining(`the tool calls ${callIds.join(', ')} of ${messageId} have no results up to it`) }],
    });
    expect(await conversationCount()).toBe(before);
  }

  it('refuses a fork at a call awaiting an approval (409 naming it), and forks there once it is decided', async () => {
    const { conversationId, client, turnId } = await parkedTurn([randomNumber]);
    const [question, asking] = await pathOf(conversationId);
    await expectForkRefused(conversationId, asking.id, ['call_0']);

    // Before the step, the fork is whole and goes on.
    const atQuestion = await fork(conversationId, question.id);
    expect(atQuestion.status).toBe(201);
    expect(shape(await nextTurnCompletes(atQuestion.body.id))).toEqual(['user', 'user']);

    expect((await harness.api.post(`/v1/turns/${turnId}/approvals`, { toolCallId: 'call_0', approved: true })).status).toBe(200);
    expect((await client.waitForTurnEnd(turnId)).at(-1)).toMatchObject({ type: 'turn-finish', turnId });
    const settled = await fork(conversationId, asking.id);
    expect(settled.status).toBe(201);
    expect(shape(await pathOf(settled.body.id))).toEqual(['user', 'assistant', 'tool call_0']);
    expect(shape(await nextTurnCompletes(settled.body.id))).toEqual(['user', 'assistant', 'tool call_0', 'user']);
  });

  it('refuses a fork at an unanswered client call, and forks there once the cancelled turn has given it a result', async () => {
    const { conversationId, client, turnId } = await parkedTurn([confirm]);
    const [, asking] = await pathOf(conversationId);
    await expectForkRefused(conversationId, asking.id, ['call_0']);

    expect((await harness.api.post(`/v1/turns/${turnId}/cancel`, {})).status).toBe(200);
    await client.waitForTurnEnd(turnId);
    const settled = await fork(conversationId, asking.id);
    expect(settled.status).toBe(201);
    const copy = await pathOf(settled.body.id);
    expect(shape(copy)).toEqual(['user', 'assistant', 'tool call_0']);
    expect(JSON.stringify(copy[2].content)).toContain('cancelled');
    expect(shape(await nextTurnCompletes(settled.body.id))).toEqual(['user', 'assistant', 'tool call_0', 'user']);
  });

  it('forks at any message of a settled three-call step with the whole step, and right after it', async () => {
    const first = await harness.runTurn(askingOnce([calculator('1+1'), calculator('2+2'), calculator('3+3')]));
    expect(first.events.at(-1)).toMatchObject({ type: 'turn-finish' });
    const path = await pathOf(first.conversationId);
    const step = ['assistant', 'tool call_0', 'tool call_1', 'tool call_2'];
    expect(shape(path)).toEqual(['user', ...step, 'assistant']);

    // The step's assistant message, its first result, its second, its last (the step's end).
    for (const point of path.slice(1, 5)) {
      const forked = await fork(first.conversationId, point.id);
      expect(forked.status).toBe(201);
      expect(forked.body.forkedFrom).toEqual({ conversationId: first.conversationId, messageId: point.id });
      expect(shape(await pathOf(forked.body.id))).toEqual(['user', ...step]);
      expect(shape(await nextTurnCompletes(forked.body.id))).toEqual(['user', ...step, 'user']);
    }
    // After the step: its answer.
    const after = await fork(first.conversationId, path[5].id);
    expect(after.status).toBe(201);
    expect(shape(await nextTurnCompletes(after.body.id))).toEqual(['user', ...step, 'assistant', 'user']);
  });

  it('refuses a fork inside a parallel step half settled, and answers a regenerate or an edit of its question there', async () => {
    const calls = [calculator('1+1'), randomNumber, confirm];
    const { conversationId, client, turnId, marker } = await parkedTurn(calls);
    const [, asking] = await pathOf(conversationId);
    await client.waitFor(isEvent('tool-result', turnId));
    await expectForkRefused(conversationId, asking.id, ['call_0', 'call_1', 'call_2']);

    // A regenerate that interrupts the parked turn answers the question again, from the question alone.
    const regenerate = await harness.api.post(`/v1/conversations/${conversationId}/turns`, { regenerate: true, onBusy: 'interrupt' });
    expect(regenerate.status).toBe(202);
    expect((await client.waitForTurnEnd(regenerate.body.turnId)).at(-1)).toMatchObject({ type: 'turn-finish', turnId: regenerate.body.turnId });
    expect(shape(harness.providerRequests(marker).at(-1)!.messages)).toEqual(['user']);
    expect(shape(await pathOf(conversationId))).toEqual(['user', 'assistant']);

    // The same at an edit of the question, while a new parked turn waits on the same calls.
    const again = await parkedTurn(calls);
    const [againQuestion] = await pathOf(again.conversationId);
    const edit = await harness.api.post(`/v1/conversations/${again.conversationId}/turns`, { content: 'Just say hi.', fromMessageId: againQuestion.id, onBusy: 'interrupt' });
    expect(edit.status).toBe(202);
    expect((await again.client.waitForTurnEnd(edit.body.turnId)).at(-1)).toMatchObject({ type: 'turn-finish', turnId: edit.body.turnId });
    expect(shape(await pathOf(again.conversationId))).toEqual(['user', 'assistant']);
    expect(await nextTurnCompletes(again.conversationId)).toHaveLength(3);
  });

  it('edits and regenerates the question after a settled step on a history the model accepts', async () => {
    const first = await harness.runTurn(askingOnce([calculator('1+1'), calculator('2+2'), calculator('3+3')]));
    const second = await harness.runTurn({ text: 'second' }, { conversationId: first.conversationId });
    expect(second.events.at(-1)).toMatchObject({ type: 'turn-finish' });
    const step = ['assistant', 'tool call_0', 'tool call_1', 'tool call_2', 'assistant'];
    const secondQuestion = (await pathOf(first.conversationId))[6];
    expect(secondQuestion.role).toBe('user');

    const regenerated = await harness.runTurn({ text: 'unused' }, { conversationId: first.conversationId, body: { content: undefined, regenerate: true } });
    expect(regenerated.events.at(-1)).toMatchObject({ type: 'turn-finish' });
    const edited = await harness.runTurn({ text: 'edited' }, { conversationId: first.conversationId, body: { fromMessageId: secondQuestion.id } });
    expect(edited.events.at(-1)).toMatchObject({ type: 'turn-finish' });
    expect(shape(harness.providerRequests(edited.marker).at(-1)!.messages)).toEqual(['user', ...step, 'user']);
    expect(shape(await pathOf(first.conversationId))).toEqual(['user', ...step, 'user', 'assistant']);
  });
});
