import { faultProcesses } from '../support/fault-processes';
import { apiClient } from '../support/http';
import { checkInvariants } from '../support/invariants';
import { startToolHttpServer, type ToolHttpServer } from '../support/tool-servers';
import { eventsOfType, startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';
import { markedScripted } from '../support/scripted';
import { isEvent, TestWsClient } from '../support/ws-client';

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
        'desk.json': [
          {
            kind: 'client',
            name: 'open_file',
            description: "Opens a file on the user's machine",
            timeoutMs: 20_000,
            needsApproval: true,
            fields: [{ name: 'path', required: true }],
          },
          {
            kind: 'client',
            name: 'sign_file',
            description: "Signs a file on the user's machine",
            timeoutMs: 2000,
            needsApproval: true,
            fields: [{ name: 'path', required: true }],
          },
        ],
      },
    });
  });
  afterEach(() => processes.stopAll());
  afterAll(async () => {
    await harness.close();
    await server.close();
  });

  const transfersTo = (to: string) => server.requests.filter((request) => request.path === '/transfer' && (request.body as any)?.to === to);

  /**
   * A turn posted through a real API process and run by a real worker, up to its approval
   * request: `client` follows it through that API, `observer` through the harness's own (it
   * outlives the processes a test kills).
   */
  async function parkedTurn(to: string, call: { name: string; arguments: Record<string, unknown> } = { name: 'transfer', arguments: { to } }) {
    const worker = await processes.spawn('worker');
    const api = await processes.spawn('api');
    const http = apiClient(api.url, harness.apiKey);
    const conversationId = (await http.post('/v1/conversations', {})).body.id as string;
    const client = await TestWsClient.subscribed(api.url, { apiKey: harness.apiKey }, conversationId);
    const observer = await harness.subscribe(conversationId);
    const marker = `run-${to}-${Date.now()}`;
    const scenario = { steps: [{ toolCalls: [call] }, { text: 'sent' }] };
    const posted = await http.post(`/v1/conversations/${conversationId}/turns`, { content: markedScripted(scenario, marker) });
    expect(posted.status).toBe(202);
    const turnId = posted.body.turnId as string;
    const request = (await client.waitFor(isEvent('tool-approval-request', turnId))).event;
    await client.waitFor(isEvent('turn-waiting', turnId));
    client.close();
    return { api, http, worker, observer, turnId, marker, request };
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
    // Four process starts one after another (three in the next two tests), each seconds long on a loaded machine.
    const { api, worker, observer, turnId, request } = await parkedTurn('alice');
    await Promise.all([api.kill('SIGKILL'), worker.kill('SIGKILL')]);

    const freshApi = await processes.spawn('api');
    const pending = await apiClient(freshApi.url, harness.apiKey).get('/v1/approvals?status=pending');
    expect(pending.body.data.map((each: any) => each.toolCallId)).toContain(request.toolCallId);
    await processes.spawn('worker');
    const decided = await apiClient(freshApi.url, harness.apiKey).post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: true });
    expect(decided.status).toBe(200);
    await expectCompletedOnce(observer, turnId, request.toolCallId, 'alice');
  }, 90_000);

  it('keeps a decision taken while no worker runs, through the death of the API that took it', async () => {
    const { http, api, worker, observer, turnId, request } = await parkedTurn('bob');
    await worker.kill('SIGKILL');
    const decided = await http.post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: true });
    expect(decided.status).toBe(200);
    await api.kill('SIGKILL');
    expect(transfersTo('bob')).toHaveLength(0);

    await processes.spawn('worker');
    await expectCompletedOnce(observer, turnId, request.toolCallId, 'bob');
  }, 90_000);

  it('never runs a call denied while no worker ran, through the death of the API that took the denial: the model gets the denial and the turn completes once', async () => {
    const { http, api, worker, observer, turnId, marker, request } = await parkedTurn('mallory');
    await worker.kill('SIGKILL');
    const denied = await http.post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: false, reason: 'not this payee' });
    expect(denied.status).toBe(200);
    await api.kill('SIGKILL');
    expect(observer.frames.some(isEvent('turn-finish', turnId))).toBe(false);

    await processes.spawn('worker');
    const events = (await observer.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
    expect(eventsOfType(events, 'turn-finish')).toEqual([expect.objectContaining({ finishReason: 'stop' })]);
    expect(eventsOfType(events, 'tool-result')).toEqual([
      expect.objectContaining({ toolCallId: request.toolCallId, error: { code: 'denied', message: 'not this payee' }, attempts: 0 }),
    ]);
    const providerRequests = harness.providerRequests(marker);
    expect(providerRequests).toHaveLength(2);
    expect(providerRequests[1].messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: request.toolCallId,
      content: JSON.stringify({ error: { code: 'denied', message: 'not this payee' } }),
    });
    expect(transfersTo('mallory')).toHaveLength(0);
    const statuses = await checkInvariants(harness.stack.resources.db, { turnIds: [turnId], toolExecutions: server.executions('/transfer'), events });
    expect(statuses).toEqual({ [turnId]: 'completed' });
  }, 90_000);

  /** What an API process that dies right after an approval leaves: the decision and the call's release committed, nothing sent. */
  async function approveAndDie(turnId: string, toolCallId: string, args: Record<string, unknown>) {
    const { db, toolApprovals, toolCalls } = harness.stack.resources;
    await db.transaction(async (tx) => {
      const approval = await toolApprovals.lock(turnId, toolCallId, tx);
      await toolApprovals.decide(approval!.approvalId, { approved: true, reason: null, args: null }, tx);
      await toolCalls.release(turnId, toolCallId, args, tx);
    });
  }

  it('runs an approved call whose process died between storing the decision and sending the call out (the reconciler finds it)', async () => {
    const { observer, turnId, request } = await parkedTurn('carol');
    await approveAndDie(turnId, request.toolCallId, { to: 'carol' });
    await expectCompletedOnce(observer, turnId, request.toolCallId, 'carol');
  });

  it('asks clients to run an approved client call whose process died before asking them (the reconciler finds it); their answer completes the turn', async () => {
    const { observer, turnId, request } = await parkedTurn('dave', { name: 'open_file', arguments: { path: '/etc/hosts' } });
    await approveAndDie(turnId, request.toolCallId, { path: '/etc/hosts' });
    const asked = (await observer.waitFor(isEvent('tool-call-request', turnId))).event;
    expect(asked).toMatchObject({ toolCallId: request.toolCallId, toolName: 'open_file', args: { path: '/etc/hosts' } });
    const answered = await harness.api.post(`/v1/turns/${turnId}/tool-results`, { toolCallId: request.toolCallId, result: '127.0.0.1 localhost' });
    expect(answered.body).toEqual({ accepted: true });

    const events = (await observer.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
    expect(eventsOfType(events, 'turn-finish')).toEqual([expect.objectContaining({ finishReason: 'stop' })]);
    expect(eventsOfType(events, 'tool-result')).toEqual([expect.objectContaining({ toolCallId: request.toolCallId, result: '127.0.0.1 localhost' })]);
    const statuses = await checkInvariants(harness.stack.resources.db, { turnIds: [turnId], toolExecutions: server.executions('/transfer'), events });
    expect(statuses).toEqual({ [turnId]: 'completed' });
  }, 90_000);

  it("gives an approved client call whose process died before asking its clients the tool's timeout when no client answers", async () => {
    const { observer, turnId, request } = await parkedTurn('erin', { name: 'sign_file', arguments: { path: '/tmp/contract' } });
    await approveAndDie(turnId, request.toolCallId, { path: '/tmp/contract' });
    await observer.waitFor(isEvent('tool-call-request', turnId));

    const events = (await observer.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
    expect(eventsOfType(events, 'turn-finish')).toEqual([expect.objectContaining({ finishReason: 'stop' })]);
    expect(eventsOfType(events, 'tool-result')).toEqual([
      expect.objectContaining({ toolCallId: request.toolCallId, error: { code: 'timeout', message: expect.stringContaining('2000 ms') }, attempts: 0 }),
    ]);
    const statuses = await checkInvariants(harness.stack.resources.db, { turnIds: [turnId], toolExecutions: server.executions('/transfer'), events });
    expect(statuses).toEqual({ [turnId]: 'completed' });
  }, 90_000);
});
