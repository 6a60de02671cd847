import { turnJobId } from '../../../src/queue/turn-queue';
import type { Resources } from '../../../src/runtime/resources';
import { eventsOfTurn, startedAttempts, visibleStepTexts } from '../../support/client-view';
import { checkInvariants } from '../../support/invariants';
import { poll } from '../../support/poll';
import { startToolTurnHarness, type ToolTurnHarness } from '../../support/tool-turns';

/**
 * LOCAL_TURN_STARTS in a process that is both API and worker (this stack): a turn the API admits
 * starts at once in a free turn slot of the same process, its job added delayed as the run's
 * lease, instead of waiting for BullMQ to hand the job out. The queue is paused in these tests,
 * so a turn that starts at all started here. WORKER_CONCURRENCY=2: one slot for a local start,
 * one kept for the BullMQ worker.
 */
describe('local turn starts', () => {
  let harness: ToolTurnHarness;
  let resources: Resources;

  beforeAll(async () => {
    harness = await startToolTurnHarness({ env: { LOCAL_TURN_STARTS: 'true', WORKER_CONCURRENCY: '2', SHUTDOWN_GRACE_MS: '300' } });
    resources = harness.stack.resources;
  });
  beforeEach(() => resources.turnQueue.pause());
  afterEach(() => resources.turnQueue.resume());
  afterAll(() => harness.close());

  const jobState = (turnId: string) => resources.turnQueue.getJobState(turnJobId(turnId));
  const firstDelta = (turnId: string) => (frame: any) => frame.type === 'event' && frame.event.turnId === turnId && frame.event.type === 'text-delta';
  const starts = async (path: 'local' | 'queue') => (await resources.metrics.turnStarts.get()).values.find((value) => value.labels.path === path)?.value ?? 0;
  const ledgerLines = async (turnId: string) =>
    (await resources.db.query<{ attempt: number; outcome: string }>('SELECT attempt, outcome FROM provider_calls WHERE turn_id = $1 ORDER BY started_at, id', [turnId])).rows.map(
      (row) => [row.attempt, row.outcome],
    );

  it('runs a turn its API admitted while the queue hands out nothing, its job delayed as the lease, then removed', async () => {
    const localBefore = await starts('local');
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const { turnId } = await harness.postTurn(conversationId, { tokens: 30, tokenDelayMs: 10 });
    await client.waitFor(firstDelta(turnId));
    expect(await jobState(turnId)).toBe('delayed');

    const events = eventsOfTurn(await client.waitForTurnEnd(turnId), turnId);
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    expect(startedAttempts(events)).toEqual([1]);
    expect(await starts('local')).toBe(localBefore + 1);
    await poll('the job of the finished turn is removed', async () => (await jobState(turnId)) === 'unknown');
    expect(await ledgerLines(turnId)).toEqual([[1, 'ok']]);
    await checkInvariants(resources.db, { turnIds: [turnId], toolExecutions: [], events });
  });

  it('enqueues a turn while its slots are full, cancels a turn started here, and starts the next one here again', async () => {
    const queueBefore = await starts('queue');
    const localBefore = await starts('local');
    const held = await harness.newConversation();
    const heldClient = await harness.subscribe(held);
    // Three tokens, then the stream holds (until the provider idle timeout of 60 s).
    const { turnId: heldTurn } = await harness.postTurn(held, { tokens: 50, stallAfterTokens: 3 });
    await heldClient.waitFor(firstDelta(heldTurn));
    expect(await jobState(heldTurn)).toBe('delayed');

    const busy = await harness.newConversation();
    const busyClient = await harness.subscribe(busy);
    const { turnId: queuedTurn } = await harness.postTurn(busy, { text: 'from the queue' });
    expect(await starts('queue')).toBe(queueBefore + 1);
    expect((await resources.turns.get(queuedTurn))!.status).toBe('queued');
    expect(await jobState(queuedTurn)).not.toBe('delayed');

    const cancelled = await harness.api.post(`/v1/turns/${heldTurn}/cancel`);
    expect(cancelled.body.status).toBe('cancelled');
    expect(eventsOfTurn(await heldClient.waitForTurnEnd(heldTurn), heldTurn).at(-1).type).toBe('turn-cancelled');
    await poll('the cancelled turn job is removed', async () => (await jobState(heldTurn)) === 'unknown');
    expect(await ledgerLines(heldTurn)).toHaveLength(1);

    // The queued one waits for the queue, as without local starts.
    expect((await resources.turns.get(queuedTurn))!.status).toBe('queued');
    await resources.turnQueue.resume();
    expect(eventsOfTurn(await busyClient.waitForTurnEnd(queuedTurn), queuedTurn).at(-1)).toMatchObject({ type: 'turn-finish' });

    // The slot the cancel freed takes the next turn.
    await resources.turnQueue.pause();
    const next = await harness.runTurn({ text: 'started here again' });
    expect(next.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    expect(await starts('local')).toBe(localBefore + 2);
  });

  it('hands a turn back to the queue at shutdown, and another worker finishes it once', async () => {
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const answer = 'the worker that took it over says this';
    const { turnId } = await harness.postTurn(conversationId, { attempts: [{ tokens: 400, tokenDelayMs: 10 }, { text: answer }] });
    await client.waitFor(firstDelta(turnId));
    expect(await jobState(turnId)).toBe('delayed');

    const [first] = harness.stack.workers;
    await harness.stack.addWorker();
    await resources.turnQueue.resume();
    // Past SHUTDOWN_GRACE_MS the local run stops and promotes its job: the other worker takes it.
    await harness.stack.stopWorker(first!);
    const events = eventsOfTurn(await client.waitForTurnEnd(turnId), turnId);

    expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    expect(startedAttempts(events)).toEqual([1, 2]);
    expect(visibleStepTexts(events)).toEqual(new Map([[1, answer]]));
    expect((await ledgerLines(turnId)).map(([attempt]) => attempt)).toEqual([1, 2]);
    await checkInvariants(resources.db, { turnIds: [turnId], toolExecutions: [], events });
  });
});
