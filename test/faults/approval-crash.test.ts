import { faultProcesses } from '../support/fault-processes';
import { apiClient } from '../support/http';
import { checkInvariants } from '../support/invariants';
import { startToolHttpServer, type ToolHttpServer } from '../support/tool-servers';
import { eventsOfType, startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';
import type { TestWsClient } from '../support/ws-client';

const isEvent = (type: string, turnId: string) => (frame: any) => frame.type === 'event' && frame.event.type === type && frame.event.turnId === turnId;

/**
 * A decision on a tool approval is durable: real API and worker processes SIGKILLed between the
 * request and the decision, and between the decision and the call's execution; the call runs
 * once, the turn completes.
 */
describe('tool approvals across crashes', () => {
  let server: ToolHttpServer;
  let harness: ToolTurnHarness;
  const processes = faultProcesses(() => harness.stack);

  beforeAll(async () => {
    server = await startToolHttpServer();
    server.route('/transfer', (request) => ({ body: { done: true, sent: request.body } }));
    harness = await startToolTurnHarness({
      workers: 0,
      env: { LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '500', RECONCILE_INTERVAL_MS: '500' },
      toolFiles: {
        'bank.json': {
          name: 'transfer',
          description: 'Moves money',
          url: `${server.url}/transfer`,
          timeoutMs: 5000,
          retries: 0,
          needsApproval: true,
          fields: [{ name: 'to', required: true }],
        },
      },
    });
  });
  afterEach(() => processes.stopAll());
  afterAll(async () => {
    await harness.close();
    await server.close();
  });

  const transfersTo = (to: string) => server.requests.filter((request) => request.path === '/transfer' && (request.body as any)?.to === to);

  /** A turn posted through a real API process and run by a real worker, up to its approval request. */
  async function parkedTurn(to: string) {
    const worker = await processes.spawn('worker');
    const api = await processes.spawn('api');
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const { turnId, marker } = await harness.postTurn(conversationId, { steps: [{ toolCalls: [{ name: 'transfer', arguments: { to } }] }, { text: 'sent' }] });
    const request = (await client.waitFor(isEvent('tool-approval-request', turnId))).event;
    await client.waitFor(isEvent('turn-waiting', turnId));
    return { api, worker, client, turnId, marker, request };
  }

  async function expectCompletedOnce(client: TestWsClient, turnId: string, toolCallId: string, to: string) {
    const events = (await client.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    for (const result of eventsOfType(events, 'tool-result')) expect(result).toMatchObject({ toolCallId, result: { done: true, sent: { to } } });
    expect(transfersTo(to)).toHaveLength(1);
    expect(transfersTo(to)[0]!.headers['idempotency-key']).toBe(`${turnId}:${toolCallId}`);
    const statuses = await checkInvariants(harness.stack.resources.db, { turnIds: [turnId], toolExecutions: server.executions('/transfer'), events });
    expect(statuses).toEqual({ [turnId]: 'completed' });
  }

  it('keeps a request through the death of every API and worker process; a new API decides it, a new worker runs it', async () => {
    const { api, worker, client, turnId, request } = await parkedTurn('alice');
    await Promise.all([api.kill('SIGKILL'), worker.kill('SIGKILL')]);

    const freshApi = await processes.spawn('api');
    const pending = await apiClient(freshApi.url, harness.apiKey).get('/v1/approvals?status=pending');
    expect(pending.body.data.map((each: any) => each.toolCallId)).toContain(request.toolCallId);
    await processes.spawn('worker');
    const decided = await apiClient(freshApi.url, harness.apiKey).post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: true });
    expect(decided.status).toBe(200);
    await expectCompletedOnce(client, turnId, request.toolCallId, 'alice');
  });

  it('keeps a decision taken while no worker runs, through the death of the API that took it', async () => {
    const { api, worker, client, turnId, request } = await parkedTurn('bob');
    await worker.kill('SIGKILL');
    const decided = await apiClient(api.url, harness.apiKey).post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: true });
    expect(decided.status).toBe(200);
    await api.kill('SIGKILL');
    expect(transfersTo('bob')).toHaveLength(0);

    await processes.spawn('worker');
    await expectCompletedOnce(client, turnId, request.toolCallId, 'bob');
  });

  it('runs an approved call whose process died between storing the decision and sending the call out (the reconciler finds it)', async () => {
    const { client, turnId, request } = await parkedTurn('carol');
    // What a dying API leaves: the decision and the call's release committed, no job sent.
    const { db, toolApprovals, toolCalls } = harness.stack.resources;
    await db.transaction(async (tx) => {
      const approval = await toolApprovals.lock(turnId, request.toolCallId, tx);
      await toolApprovals.decide(approval!.approvalId, { approved: true, reason: null, args: null }, tx);
      await toolCalls.release(turnId, request.toolCallId, { to: 'carol' }, tx);
    });
    await expectCompletedOnce(client, turnId, request.toolCallId, 'carol');
  });
});
