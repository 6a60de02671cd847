import { checkInvariants } from '../support/invariants';
import { spawnService } from '../support/processes';
import { eventsOfType, startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';
import { isEvent, type TestWsClient } from '../support/ws-client';

// A timeout far beyond the test: only the fix, not the timeout job, can move the turn on.
const clientTools = {
  'client-tools.json': {
    tools: [{ kind: 'client', name: 'confirm', description: 'Asks the user to confirm', timeoutMs: 3_600_000, fields: [{ name: 'question', required: true }] }],
  },
};
const confirmScenario = { steps: [{ toolCalls: [{ name: 'confirm', arguments: { question: 'Ship it?' } }] }, { text: 'shipped' }] };

interface Answered {
  client: TestWsClient;
  turnId: string;
  toolCallId: string;
  marker: string;
}

/**
 * A turn waiting on a client tool, answered through a real API process that is SIGKILLed right
 * after it stored and announced the answer, before it resumed the turn. The process decides to
 * resume under the conversation's row lock; the test holds that lock, so the process can get no
 * further than the store and the announcement before it dies.
 */
async function answerThroughDyingApi(harness: ToolTurnHarness): Promise<Answered> {
  const conversationId = await harness.newConversation();
  const client = await harness.subscribe(conversationId);
  const { turnId, marker } = await harness.postTurn(conversationId, confirmScenario);
  const [toolCallId] = (await client.waitFor(isEvent('turn-waiting', turnId))).event.toolCallIds;

  const { db, conversations } = harness.stack.resources;
  let releaseLock!: () => void;
  let lockHeld!: () => void;
  const held = new Promise<void>((resolve) => (lockHeld = resolve));
  const holding = db.transaction(async (tx) => {
    await conversations.lock(conversationId, tx);
    lockHeld();
    await new Promise<void>((resolve) => (releaseLock = resolve));
  });
  await held;

  const api = await spawnService('api', harness.stack.childEnv());
  try {
    const answering = fetch(`${api.url}/v1/turns/${turnId}/tool-results`, {
      method: 'POST',
      headers: { authorization: `Bearer ${harness.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ toolCallId, result: { confirmed: true } }),
    }).catch(() => 'connection lost');
    const result = (await client.waitFor(isEvent('tool-result', turnId))).event;
    expect(result).toMatchObject({ toolCallId, result: { confirmed: true }, attempts: 1 });
    await api.kill('SIGKILL');
    expect(await answering).toBe('connection lost');
  } finally {
    await api.kill('SIGKILL');
    releaseLock();
    await holding;
  }
  const stored = (await harness.api.get(`/v1/turns/${turnId}`)).body;
  expect(stored.toolCalls).toEqual([expect.objectContaining({ status: 'succeeded', result: { confirmed: true } })]);
  return { client, turnId, toolCallId, marker };
}

/** The turn went on once, with the stored answer. */
async function expectCompletedWithAnswer(harness: ToolTurnHarness, answered: Answered): Promise<void> {
  const events = (await answered.client.waitForTurnEnd(answered.turnId)).filter((event) => event.turnId === answered.turnId);
  expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
  for (const result of eventsOfType(events, 'tool-result')) expect(result).toMatchObject({ toolCallId: answered.toolCallId, result: { confirmed: true } });
  expect(eventsOfType(events, 'tool_processing_complete')).toEqual([expect.objectContaining({ results: 1, failed: 0 })]);
  const requests = harness.providerRequests(answered.marker);
  expect(requests).toHaveLength(2);
  expect(requests[1].messages.filter((message: any) => message.role === 'tool')).toEqual([
    { role: 'tool', tool_call_id: answered.toolCallId, content: JSON.stringify({ confirmed: true }) },
  ]);
  const statuses = await checkInvariants(harness.stack.resources.db, { turnIds: [answered.turnId], toolExecutions: [], events });
  expect(statuses).toEqual({ [answered.turnId]: 'completed' });
}

describe('an API process that dies right after storing a client tool answer', () => {
  describe('with the reconciler running', () => {
    let harness: ToolTurnHarness;

    beforeAll(async () => {
      harness = await startToolTurnHarness({ toolFiles: clientTools, env: { RECONCILE_INTERVAL_MS: '500' } });
    });
    afterAll(() => harness.close());

    it('leaves a turn the reconciler takes up: it completes with the stored answer', async () => {
      const answered = await answerThroughDyingApi(harness);
      await expectCompletedWithAnswer(harness, answered);
    });
  });

  describe('with no reconciler pass meanwhile', () => {
    let harness: ToolTurnHarness;

    beforeAll(async () => {
      harness = await startToolTurnHarness({ toolFiles: clientTools, env: { RECONCILE_INTERVAL_MS: '3600000' } });
    });
    afterAll(() => harness.close());

    it('leaves a turn that a repeated answer resumes: acknowledged as ignored, the turn goes on with the first answer', async () => {
      const answered = await answerThroughDyingApi(harness);
      expect((await harness.api.get(`/v1/turns/${answered.turnId}`)).body.status).toBe('waiting_tools');
      const again = await harness.api.post(`/v1/turns/${answered.turnId}/tool-results`, { toolCallId: answered.toolCallId, result: { confirmed: false } });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ accepted: false });
      await expectCompletedWithAnswer(harness, answered);
    });
  });
});
