import { eventsOfTurn, startedAttempts, visibleStepTexts } from '../support/client-view';
import { faultProcesses } from '../support/fault-processes';
import { checkInvariants } from '../support/invariants';
import { markedScripted } from '../support/scripted';
import { startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';

/**
 * An edit (a branch turn) whose worker process is SIGKILLed while it runs: it is taken up by
 * another worker and ends once, and what it replaced was marked once, in the transaction that
 * admitted it (nothing a restart could mark again or leave half done).
 */
describe('an edit whose worker dies', () => {
  let harness: ToolTurnHarness;
  const processes = faultProcesses(() => harness.stack);

  beforeAll(async () => {
    harness = await startToolTurnHarness({ workers: 0, env: { LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '500' } });
  });
  afterEach(() => processes.stopAll());
  afterAll(() => harness.close());

  const firstOf = (turnId: string, type: string) => (frame: any) => frame.type === 'event' && frame.event.turnId === turnId && frame.event.type === type;
  const messages = async (conversationId: string, include = '') => (await harness.api.get(`/v1/conversations/${conversationId}${include}`)).body.messages as any[];
  const terminal = (events: any[]) => events.filter((event) => ['turn-finish', 'turn-error', 'turn-cancelled'].includes(event.type));

  it('finishes the edit on another worker, once, with the replaced messages marked once', async () => {
    const victim = await processes.spawn('worker');
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const { turnId: firstTurn } = await harness.postTurn(conversationId, { text: 'the first answer' });
    await client.waitForTurnEnd(firstTurn);
    const [question, answer] = await messages(conversationId);

    const answerAfterCrash = 'the edit answers this, once';
    const edited = markedScripted({ attempts: [{ tokens: 400, tokenDelayMs: 10 }, { text: answerAfterCrash }] });
    const posted = await harness.api.post(`/v1/conversations/${conversationId}/turns`, { content: edited, fromMessageId: question.id });
    expect(posted.status).toBe(202);
    const editTurn = posted.body.turnId as string;
    await client.waitFor(firstOf(editTurn, 'text-delta'));

    await processes.addWorker();
    await victim.kill('SIGKILL');
    const allEvents = await client.waitForTurnEnd(editTurn, 60_000);
    const events = eventsOfTurn(allEvents, editTurn);

    expect(terminal(events)).toEqual([expect.objectContaining({ type: 'turn-finish', finishReason: 'stop' })]);
    expect(startedAttempts(events)).toEqual([1, 2]);
    expect(visibleStepTexts(events)).toEqual(new Map([[1, answerAfterCrash]]));
    // The path: the edited message, written once, and one answer.
    expect((await messages(conversationId)).map((message) => [message.role, message.content, message.turnId])).toEqual([
      ['user', edited, editTurn],
      ['assistant', answerAfterCrash, editTurn],
    ]);
    expect((await messages(conversationId, '?include=superseded')).map((message) => [message.id, message.supersededBy ?? null])).toEqual([
      [question.id, editTurn],
      [answer.id, editTurn],
      [expect.any(String), null],
      [expect.any(String), null],
    ]);
    // Neither attempt showed the model what the edit replaced.
    const marker = edited.split(' ')[0]!;
    const requests = harness.providerRequests(marker);
    expect(requests.length).toBeGreaterThanOrEqual(2);
    for (const request of requests) expect(request.messages.map((message: any) => [message.role, message.content])).toEqual([['user', edited]]);
    expect(await checkInvariants(harness.stack.resources.db, { turnIds: [firstTurn, editTurn], toolExecutions: [], events: allEvents })).toEqual({
      [firstTurn]: 'completed',
      [editTurn]: 'completed',
    });
  });

  it('ends both once when the turn an edit was enqueued behind dies with its worker', async () => {
    const victim = await processes.spawn('worker');
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const { turnId: ahead } = await harness.postTurn(conversationId, { attempts: [{ tokens: 400, tokenDelayMs: 10 }, { text: 'the answer ahead' }] });
    await client.waitFor(firstOf(ahead, 'text-delta'));
    const [question] = await messages(conversationId);
    const edited = markedScripted({ text: 'the edited answer' });
    const posted = await harness.api.post(`/v1/conversations/${conversationId}/turns`, { content: edited, fromMessageId: question.id, onBusy: 'enqueue' });
    expect(posted.status).toBe(202);
    const editTurn = posted.body.turnId as string;

    await processes.addWorker();
    await victim.kill('SIGKILL');
    const events = await client.waitForTurnEnd(editTurn, 60_000);

    expect(terminal(eventsOfTurn(events, ahead))).toEqual([expect.objectContaining({ type: 'turn-finish' })]);
    expect(terminal(eventsOfTurn(events, editTurn))).toEqual([expect.objectContaining({ type: 'turn-finish' })]);
    expect((await messages(conversationId)).map((message) => [message.role, message.content])).toEqual([
      ['user', edited],
      ['assistant', 'the edited answer'],
    ]);
    // The turn ahead ran on its own branch to its end, then the edit replaced all of it.
    expect((await messages(conversationId, '?include=superseded')).filter((message) => message.turnId === ahead).map((message) => message.supersededBy)).toEqual([
      editTurn,
      editTurn,
    ]);
    expect(await checkInvariants(harness.stack.resources.db, { turnIds: [ahead, editTurn], toolExecutions: [], events })).toEqual({
      [ahead]: 'completed',
      [editTurn]: 'completed',
    });
  });
});
