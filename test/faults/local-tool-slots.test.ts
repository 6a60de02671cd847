import { eventsOfTurn } from '../support/client-view';
import { faultProcesses } from '../support/fault-processes';
import { checkInvariants } from '../support/invariants';
import { waitForNoJobLeft } from '../support/job-counts';
import { poll } from '../support/poll';
import { httpToolEntry, startToolHttpServer, type ToolHttpServer } from '../support/tool-servers';
import { eventsOfType, startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';

/**
 * A step's server calls run in the worker process that committed the step, at once, while the
 * step's BullMQ flow holds them: real worker processes, a tool server that counts what it
 * receives, a worker killed (SIGKILL) mid-tool. Short locks (2 s, stall checks every 500 ms), so
 * that a dead worker's holds and jobs are taken back within seconds.
 */
describe('local tool slots', () => {
  let server: ToolHttpServer;
  let harness: ToolTurnHarness;
  const processes = faultProcesses(() => harness.stack);

  beforeAll(async () => {
    server = await startToolHttpServer();
    harness = await startToolTurnHarness({
      workers: 0,
      env: { LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '500' },
      toolFiles: {
        'tools.json': {
          tools: [httpToolEntry(server.url, 'count', { timeoutMs: 30_000, retries: 0 }), httpToolEntry(server.url, 'flaky', { timeoutMs: 400, retries: 1 })],
        },
      },
    });
  });
  afterEach(() => processes.stopAll());
  afterAll(async () => {
    await harness.close();
    await server.close();
  });

  const storedCalls = async (turnId: string) =>
    (
      await harness.stack.resources.db.query<{ tool_call_id: string; status: string; attempts: number; held_by: string | null }>(
        'SELECT tool_call_id, status, attempts, held_by FROM tool_calls WHERE turn_id = $1 ORDER BY position',
        [turnId],
      )
    ).rows;
  const requestsOf = (path: string, since: number) => server.requests.slice(since).filter((request) => request.path === path);
  const executionsSince = (path: string, since: number) =>
    requestsOf(path, since).map((request) => ({ idempotencyKey: String(request.headers['idempotency-key']), at: request.receivedAt }));
  const calls = (name: string, count: number) => Array.from({ length: count }, (_, n) => ({ name, arguments: { n } }));

  it("runs a step's calls once each in the worker that committed the step, their queued jobs stepping aside", async () => {
    await processes.spawn('worker');
    const since = server.requests.length;
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const { turnId } = await harness.postTurn(conversationId, { steps: [{ toolCalls: calls('count', 8) }, { text: 'counted' }] });
    const events = eventsOfTurn(await client.waitForTurnEnd(turnId), turnId);

    expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    const requests = requestsOf('/count', since);
    expect(requests.map((request) => (request.body as { n: number }).n).sort()).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(new Set(requests.map((request) => request.headers['idempotency-key'])).size).toBe(8);
    // Claimed by the worker's local slots, each started once; the eight queued jobs ran nothing.
    const stored = await storedCalls(turnId);
    expect(stored.map((call) => [call.status, call.attempts])).toEqual(Array.from({ length: 8 }, () => ['succeeded', 1]));
    expect(new Set(stored.map((call) => call.held_by))).toEqual(new Set([expect.stringContaining(':')]));
    expect(eventsOfType(events, 'tool-result')).toHaveLength(8);
    expect(eventsOfType(events, 'tool_processing_complete')).toEqual([expect.objectContaining({ results: 8, failed: 0 })]);
    // The flow's jobs (eight tool jobs, the continuation) all finished.
    await waitForNoJobLeft(harness.stack.resources.toolQueue);
    await waitForNoJobLeft(harness.stack.resources.turnQueue);
    expect(requestsOf('/count', since)).toHaveLength(8);
    await checkInvariants(harness.stack.resources.db, { turnIds: [turnId], toolExecutions: executionsSince('/count', since), events });
  });

  it("runs a killed worker's held call again once, through its queued job, and the calls it settled not at all", async () => {
    let firstOfZero = true;
    server.route('/count', (request) => {
      const { n } = request.body as { n: number };
      if (n === 0 && firstOfZero) {
        firstOfZero = false;
        return { hang: true };
      }
      return { body: { n } };
    });
    const victim = await processes.spawn('worker');
    const since = server.requests.length;
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const { turnId } = await harness.postTurn(conversationId, { steps: [{ toolCalls: calls('count', 3) }, { text: 'counted' }] });
    // Calls 1 and 2 settled by the victim's slots, call 0 hanging in one of them.
    await poll('the victim never settled calls 1 and 2', async () => (await storedCalls(turnId)).filter((call) => call.status === 'succeeded').length === 2);
    expect((await storedCalls(turnId))[0]).toMatchObject({ status: 'running', attempts: 1, held_by: expect.any(String) });

    await processes.addWorker();
    await victim.kill('SIGKILL');
    const events = eventsOfTurn(await client.waitForTurnEnd(turnId), turnId);

    expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    const byN = (n: number) => requestsOf('/count', since).filter((request) => (request.body as { n: number }).n === n);
    expect([byN(0).length, byN(1).length, byN(2).length]).toEqual([2, 1, 1]);
    expect(byN(0)[1]!.headers['idempotency-key']).toBe(byN(0)[0]!.headers['idempotency-key']);
    expect((await storedCalls(turnId)).map((call) => [call.status, call.attempts])).toEqual([
      ['succeeded', 2],
      ['succeeded', 1],
      ['succeeded', 1],
    ]);
    expect(eventsOfType(events, 'tool_processing_complete')).toEqual([expect.objectContaining({ results: 3, failed: 0 })]);
    await waitForNoJobLeft(harness.stack.resources.toolQueue);
    await checkInvariants(harness.stack.resources.db, { turnIds: [turnId], toolExecutions: executionsSince('/count', since), events });
  });

  it('keeps a tool timeout and its retry, with the retry delay, in a local slot', async () => {
    server.hangNext(1);
    await processes.spawn('worker');
    const since = server.requests.length;
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const { turnId } = await harness.postTurn(conversationId, { steps: [{ toolCalls: calls('flaky', 1) }, { text: 'done' }] });
    const events = eventsOfTurn(await client.waitForTurnEnd(turnId), turnId);

    const [first, second] = requestsOf('/flaky', since);
    expect(requestsOf('/flaky', since)).toHaveLength(2);
    // The first attempt timed out and was retried with the same Idempotency-Key.
    expect(first!.abortedAt).toBeDefined();
    expect(second!.headers['idempotency-key']).toBe(first!.headers['idempotency-key']);
    expect(eventsOfType(events, 'tool-result')).toEqual([expect.objectContaining({ attempts: 2, result: expect.anything() })]);
    expect(await storedCalls(turnId)).toEqual([expect.objectContaining({ status: 'succeeded', attempts: 2, held_by: expect.any(String) })]);
  });
});
