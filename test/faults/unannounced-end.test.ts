import { checkInvariants } from '../support/invariants';
import { startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';

/**
 * A worker that dies between a turn's final commit and its announcement (SIGKILL in that
 * window) leaves the turn ended with no final event. The job's re-run announces it, once.
 */
describe('a turn ended in PostgreSQL but never announced', () => {
  let harness: ToolTurnHarness;

  beforeAll(async () => {
    harness = await startToolTurnHarness({ workers: 0 });
  });
  afterAll(() => harness.close());

  it('gets its final event when its job runs again, and only one however often the job runs', async () => {
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const { turnId } = await harness.postTurn(conversationId, { text: 'never streamed' });
    // What the dead worker left: the end committed with the events that announce it, none appended.
    const usage = { promptTokens: 3, completionTokens: 2, totalTokens: 5 };
    await harness.stack.resources.turns.finish(turnId, null, { status: 'completed', finishReason: 'stop' }, [
      { type: 'step-finish', step: 1, finishReason: 'stop', usage },
      { type: 'turn-finish', finishReason: 'stop', usage },
    ]);

    await harness.stack.addWorker();
    const finish = await client.waitFor((frame) => frame.type === 'event' && frame.event.turnId === turnId && frame.event.type === 'turn-finish');
    expect(finish.event).toMatchObject({ finishReason: 'stop', usage });
    const stepFinish = client.events().find((event) => event.turnId === turnId && event.type === 'step-finish');
    expect(stepFinish).toMatchObject({ step: 1, seq: finish.event.seq - 1 });

    // Another run of the job finds the end announced and adds nothing.
    await harness.stack.resources.enqueueTurn({ id: turnId, userId: (await harness.stack.resources.turns.get(turnId))!.userId });
    const again = await harness.postTurn(conversationId, { text: 'next' });
    await client.waitForTurnEnd(again.turnId);
    const finishes = client.events().filter((event) => event.turnId === turnId && event.type === 'turn-finish');
    expect(finishes).toHaveLength(1);
    const statuses = await checkInvariants(harness.stack.resources.db, { turnIds: [turnId, again.turnId], toolExecutions: [], events: client.events() });
    expect(statuses).toEqual({ [turnId]: 'completed', [again.turnId]: 'completed' });
  });
});
