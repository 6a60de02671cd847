import { eventsOfTurn, startedAttempts, visibleStepTexts } from '../support/client-view';
import { faultProcesses } from '../support/fault-processes';
import { checkInvariants } from '../support/invariants';
import { TEST_REDIS_URL } from '../support/services';
import { startTcpProxy } from '../support/tcp-proxy';
import { httpToolEntry, startToolHttpServer, type ToolHttpServer } from '../support/tool-servers';
import { eventsOfType, startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';

/**
 * docs/RELIABILITY.md cases 1–4: real worker processes killed (SIGKILL) or stopped (SIGSTOP) in the
 * middle of a turn. Short locks (2 s, stall checks every 500 ms) so that a dead worker's job is
 * taken back within seconds.
 */
describe('worker crashes', () => {
  let server: ToolHttpServer;
  let harness: ToolTurnHarness;
  const processes = faultProcesses(() => harness.stack);

  beforeAll(async () => {
    server = await startToolHttpServer();
    const tool = (name: string) => httpToolEntry(server.url, name, { timeoutMs: 30_000, retries: 0 }, 'amount');
    harness = await startToolTurnHarness({
      workers: 0,
      env: { LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '500' },
      toolFiles: { 'tools.json': { tools: [tool('charge'), tool('record')] } },
    });
  });
  afterEach(() => processes.stopAll());
  afterAll(async () => {
    await harness.close();
    await server.close();
  });

  /** The worker that survives: in this process, started just before the other one dies. */
  const addSurvivor = () => processes.addWorker();
  const firstOf = (turnId: string, type: string) => (frame: any) => frame.type === 'event' && frame.event.turnId === turnId && frame.event.type === type;
  const assistantMessages = async (conversationId: string, turnId: string) =>
    ((await harness.api.get(`/v1/conversations/${conversationId}`)).body.messages as any[]).filter((message) => message.role === 'assistant' && message.turnId === turnId);

  it('finishes a turn whose worker was killed mid-stream on another worker; clients drop the dead attempt (case 1)', async () => {
    const victim = await processes.spawn('worker');
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const answer = 'the second attempt says this, once';
    const { turnId } = await harness.postTurn(conversationId, { attempts: [{ tokens: 400, tokenDelayMs: 10 }, { text: answer }] });
    await client.waitFor(firstOf(turnId, 'text-delta'));

    await addSurvivor();
    await victim.kill('SIGKILL');
    const events = eventsOfTurn(await client.waitForTurnEnd(turnId), turnId);

    expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    expect(startedAttempts(events)).toEqual([1, 2]);
    const restart = events.findIndex((event) => event.type === 'turn-start' && event.attempt === 2);
    expect(events[restart + 1]).toMatchObject({ type: 'attempt-discarded', attempt: 1, step: 1 });
    expect(eventsOfType(events.slice(0, restart), 'text-delta').length).toBeGreaterThan(0);
    // Dropping what the discarded attempt sent leaves exactly the stored answer: nothing glued.
    expect(visibleStepTexts(events)).toEqual(new Map([[1, answer]]));
    expect((await assistantMessages(conversationId, turnId)).map((message) => message.content)).toEqual([answer]);
    expect((await harness.api.get(`/v1/turns/${turnId}`)).body).toMatchObject({ status: 'completed', attempt: 2 });
    expect(await checkInvariants(harness.stack.resources.db, { turnIds: [turnId], toolExecutions: [], events })).toEqual({ [turnId]: 'completed' });
  });

  it('runs a tool again with the same Idempotency-Key when its worker dies after the side effect, before the result (case 2)', async () => {
    let charges = 0;
    // The first request is the side effect whose answer the dying worker never gets.
    server.route('/charge', () => (++charges === 1 ? { hang: true } : { body: { charged: 5, receipt: `r-${charges}` } }));
    const victim = await processes.spawn('worker');
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const before = server.requests.length;
    const { turnId } = await harness.postTurn(conversationId, {
      steps: [{ toolCalls: [{ name: 'charge', arguments: { amount: 5 } }] }, { text: 'charged you 5' }],
    });
    const requests = () => server.requests.filter((request) => request.path === '/charge');
    await server.waitForRequests(before + 1);
    expect(requests()).toHaveLength(1);

    await addSurvivor();
    await victim.kill('SIGKILL');
    const events = eventsOfTurn(await client.waitForTurnEnd(turnId), turnId);

    expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    const [first, second] = requests();
    expect(requests()).toHaveLength(2);
    const [call] = eventsOfType(events, 'tool-call-end');
    expect(first!.headers['idempotency-key']).toBe(`${turnId}:${call.toolCallId}`);
    expect(second!.headers['idempotency-key']).toBe(first!.headers['idempotency-key']);
    expect(eventsOfType(events, 'tool-result')).toEqual([expect.objectContaining({ toolCallId: call.toolCallId, result: { charged: 5, receipt: 'r-2' }, attempts: 2 })]);
    const turn = await harness.api.get(`/v1/turns/${turnId}`);
    expect(turn.body.toolCalls).toEqual([expect.objectContaining({ status: 'succeeded', attempts: 2, result: { charged: 5, receipt: 'r-2' } })]);
    await checkInvariants(harness.stack.resources.db, {
      turnIds: [turnId],
      toolExecutions: server.executions('/charge'),
      events,
    });

    // The history the crash left is one the provider accepts.
    const next = await harness.runTurn({ text: 'anything else?' }, { conversationId });
    expect(next.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
  });

  it('reuses the stored result when the worker dies after storing it, before acknowledging the job, and announces it (case 2)', async () => {
    // The victim reaches Redis through a proxy that the tool cuts as it answers: the worker
    // stores the result in PostgreSQL, then can neither announce it nor acknowledge its job.
    const redisProxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(TEST_REDIS_URL).port) });
    server.route('/record', () => {
      redisProxy.cut();
      return { body: { recorded: 'once' } };
    });
    const victim = await processes.spawn('worker', { REDIS_URL: redisProxy.urlFor(TEST_REDIS_URL) });
    try {
      const conversationId = await harness.newConversation();
      const client = await harness.subscribe(conversationId);
      const before = server.requests.length;
      const { turnId, marker } = await harness.postTurn(conversationId, {
        steps: [{ toolCalls: [{ name: 'record', arguments: { amount: 1 } }] }, { text: 'recorded' }],
      });
      const [request] = (await server.waitForRequests(before + 1)).slice(before);
      const stored = async () => (await harness.stack.resources.toolCalls.listForTurn(turnId))[0]?.status === 'succeeded';
      // Nothing announces a write that Redis cannot carry: poll PostgreSQL, with a deadline.
      for (const deadline = Date.now() + 5_000; !(await stored());) {
        if (Date.now() > deadline) throw new Error('the victim never stored the tool result');
        await new Promise((resolve) => setTimeout(resolve, 20));
      }

      await addSurvivor();
      await victim.kill('SIGKILL');
      const events = eventsOfTurn(await client.waitForTurnEnd(turnId), turnId);

      expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
      // Redelivered to the survivor, the job found the stored result and did not run the tool.
      expect(server.requests.filter((each) => each.path === '/record')).toEqual([request]);
      const turn = await harness.api.get(`/v1/turns/${turnId}`);
      expect(turn.body.toolCalls).toEqual([expect.objectContaining({ status: 'succeeded', attempts: 1, result: { recorded: 'once' } })]);
      const followUp = harness.providerRequests(marker)[1];
      expect(followUp.messages.at(-1)).toMatchObject({ role: 'tool', content: JSON.stringify({ recorded: 'once' }) });
      await checkInvariants(harness.stack.resources.db, {
        turnIds: [turnId],
        toolExecutions: server.executions('/record'),
        events,
      });

      // The first worker died between storing the result and announcing it: the redelivered
      // tool job, or the redelivered start of the turn if it completes the tool phase first,
      // announces it before the phase ends. Both may (a client keys results by toolCallId).
      const results = eventsOfType(events, 'tool-result');
      expect(results.length).toBeGreaterThanOrEqual(1);
      expect(results).toEqual(results.map(() => expect.objectContaining({ result: { recorded: 'once' }, attempts: 1 })));
      const complete = events.findIndex((event) => event.type === 'tool_processing_complete');
      expect(events.indexOf(results.at(-1))).toBeLessThan(complete);
    } finally {
      await redisProxy.close();
    }
  });

  it('ends a turn whose workers die more often than MAX_STALLED_COUNT allows with a visible stalled error (case 3)', async () => {
    // Three process starts and two stall recoveries one after another: more than Jest's 30 s on a loaded machine.
    // A job survives one lost worker, not two.
    const spawnFragileWorker = () => processes.spawn('worker', { MAX_STALLED_COUNT: '1' });
    const first = await spawnFragileWorker();
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const { turnId } = await harness.postTurn(conversationId, { tokens: 2000, tokenDelayMs: 10 });
    await client.waitFor(firstOf(turnId, 'text-delta'));

    // Each worker is ready before the one holding the turn dies, so it is the one to take it.
    const second = await spawnFragileWorker();
    await first.kill('SIGKILL');
    await client.waitFor((frame) => firstOf(turnId, 'turn-start')(frame) && frame.event.attempt === 2);
    await spawnFragileWorker();
    await second.kill('SIGKILL');

    const events = eventsOfTurn(await client.waitForTurnEnd(turnId), turnId);
    expect(events.at(-1)).toMatchObject({ type: 'turn-error', error: { code: 'stalled' } });
    expect(startedAttempts(events)).toEqual([1, 2]);
    expect((await harness.api.get(`/v1/turns/${turnId}`)).body).toMatchObject({ status: 'failed', error: { code: 'stalled' } });
    expect(await assistantMessages(conversationId, turnId)).toEqual([]);
    expect(await checkInvariants(harness.stack.resources.db, { turnIds: [turnId], toolExecutions: [], events })).toEqual({ [turnId]: 'failed' });

    // Nothing hangs: the conversation takes its next turn at once.
    const next = await harness.runTurn({ text: 'still here' }, { conversationId });
    expect(next.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
  }, 90_000);

  it('fences off a worker stopped past its lock: another worker finishes the turn and the stale one writes nothing (case 4)', async () => {
    const stale = await processes.spawn('worker');
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const staleText = Array.from({ length: 150 }, (_, i) => `stale${i}`).join(' ');
    const answer = 'the fresh attempt answers';
    const { turnId } = await harness.postTurn(conversationId, { attempts: [{ text: staleText, tokenDelayMs: 20 }, { text: answer }] });
    await client.waitFor(firstOf(turnId, 'text-delta'));

    stale.signal('SIGSTOP');
    await addSurvivor();
    await client.waitForTurnEnd(turnId);
    // Woken up, the stale worker still has its stream to read and its job to finish.
    stale.signal('SIGCONT');
    const stopped = await stale.waitForLog((entry) => entry.msg === 'turn attempt stopped' && entry.turnId === turnId);
    expect(['fenced', 'lock lost']).toContain(stopped.reason);

    const { events: logged } = await harness.stack.resources.eventLog.read(conversationId, 0);
    const events = logged.map((event) => JSON.parse(event.json)).filter((event) => event.turnId === turnId);
    const restart = events.findIndex((event) => event.type === 'turn-start' && event.attempt === 2);
    expect(restart).toBeGreaterThan(0);
    expect(startedAttempts(events)).toEqual([1, 2]);
    expect(events.slice(restart).filter((event) => event.type === 'text-delta' && event.delta.includes('stale'))).toEqual([]);
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    expect(eventsOfType(events, 'turn-finish')).toHaveLength(1);
    expect(visibleStepTexts(events)).toEqual(new Map([[1, answer]]));

    expect((await assistantMessages(conversationId, turnId)).map((message) => message.content)).toEqual([answer]);
    expect((await harness.api.get(`/v1/turns/${turnId}`)).body).toMatchObject({ status: 'completed', attempt: 2, steps: [expect.objectContaining({ step: 1 })] });
    expect(await checkInvariants(harness.stack.resources.db, { turnIds: [turnId], toolExecutions: [], events })).toEqual({ [turnId]: 'completed' });
  });
});
