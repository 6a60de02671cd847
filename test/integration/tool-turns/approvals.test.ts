import { apiClient } from '../../support/http';
import { eventsOfType, startToolTurnHarness, type ToolTurnHarness } from '../../support/tool-turns';
import { transferTool } from '../../support/approval-tools';
import { waitUntilStatementWaitsForLock } from '../../support/lock-waits';
import { startToolHttpServer, type ToolHttpServer } from '../../support/tool-servers';
import type { TestWsClient } from '../../support/ws-client';
import { isEvent } from '../../support/ws-client';

/** Tool approvals (docs/API.md "Tool approvals"): a person decides a gated call before it runs. */
describe('tool approvals', () => {
  let server: ToolHttpServer;
  let harness: ToolTurnHarness;

  beforeAll(async () => {
    server = await startToolHttpServer();
    server.route('/transfer', (request) => ({ body: { done: true, sent: request.body } }));
    server.route('/lookup', { body: { balance: 12 } });
    harness = await startToolTurnHarness({
      toolFiles: {
        'bank.json': [
          transferTool(server.url),
          {
            name: 'quick_transfer',
            description: 'Moves money; its approvals expire fast',
            url: `${server.url}/transfer`,
            timeoutMs: 2000,
            retries: 0,
            needsApproval: true,
            approvalTimeoutMs: 1000,
            fields: [{ name: 'to', required: true }],
          },
          { name: 'lookup', description: 'Reads the balance', url: `${server.url}/lookup`, timeoutMs: 2000, retries: 0 },
          { name: 'slow_lookup', description: 'Reads the balance, slowly', url: `${server.url}/slow-lookup`, timeoutMs: 20_000, retries: 0 },
          {
            kind: 'client',
            name: 'open_file',
            description: "Opens a file on the user's machine",
            timeoutMs: 20_000,
            needsApproval: true,
            fields: [{ name: 'path', required: true }],
          },
        ],
      },
      env: { APPROVAL_REQUIRED_TOOLS: 'random_number' },
    });
  });
  afterAll(async () => {
    await harness.close();
    await server.close();
  });

  const transferTo = (to: string, amount = 5) => ({ name: 'transfer', arguments: { to, amount } });
  const transfersTo = (to: string) => server.requests.filter((request) => request.path === '/transfer' && (request.body as any)?.to === to);

  /** A turn that calls `calls` in its first step, subscribed; waits for the approval requests. */
  async function startGatedTurn(calls: unknown[], expectedRequests = 1, body: Record<string, unknown> = {}) {
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const { turnId, marker } = await harness.postTurn(conversationId, { steps: [{ toolCalls: calls }, { text: 'done' }] }, body);
    const requests: any[] = [];
    for (let count = 0; count < expectedRequests; count++) {
      requests.push((await client.waitFor((frame) => isEvent('tool-approval-request', turnId)(frame) && !requests.some((seen) => seen.seq === frame.event.seq))).event);
    }
    return { conversationId, client, turnId, marker, requests };
  }

  /** `switchyard_tool_approvals_pending` on the API's /metrics (read from the database at scrape time). */
  async function pendingGauge(): Promise<number> {
    const page = await (await fetch(`${harness.stack.url}/metrics`)).text();
    return Number(/^switchyard_tool_approvals_pending (\d+)$/m.exec(page)?.[1]);
  }

  async function waitForStatus(turnId: string, status: string, client: TestWsClient) {
    // The turn parks before it announces `turn-waiting`: on that event the status is readable.
    await client.waitFor(isEvent('turn-waiting', turnId));
    expect((await harness.api.get(`/v1/turns/${turnId}`)).body.status).toBe(status);
  }

  it('lists needsApproval on GET /v1/tools, from tool files and from APPROVAL_REQUIRED_TOOLS', async () => {
    const listed = new Map<string, any>((await harness.api.get('/v1/tools')).body.tools.map((tool: any) => [tool.name, tool]));
    expect(listed.get('transfer')).toMatchObject({ needsApproval: true });
    expect(listed.get('lookup')).toMatchObject({ needsApproval: false });
    expect(listed.get('random_number')).toMatchObject({ kind: 'builtin', needsApproval: true });
    expect(listed.get('calculator')).toMatchObject({ needsApproval: false });
  });

  it('parks the turn as waiting_approval until a person approves over REST; the call then runs once and the turn completes', async () => {
    const { client, turnId, marker, requests, conversationId } = await startGatedTurn([transferTo('alice')]);
    const [request] = requests;
    expect(request).toMatchObject({ toolName: 'transfer', args: { to: 'alice', amount: 5 }, approvalId: expect.stringMatching(/^appr_/) });
    expect(Date.parse(request.expiresAt) - Date.now()).toBeGreaterThan(23 * 3600 * 1000);
    await waitForStatus(turnId, 'waiting_approval', client);
    const detail = (await harness.api.get(`/v1/turns/${turnId}`)).body;
    expect(detail.toolCalls).toEqual([expect.objectContaining({ toolCallId: request.toolCallId, status: 'awaiting_approval', attempts: 0 })]);
    expect(transfersTo('alice')).toHaveLength(0);
    expect(await pendingGauge()).toBe(1);

    const pending = await harness.api.get('/v1/approvals?status=pending');
    expect(pending.status).toBe(200);
    expect(pending.body.data).toContainEqual({
      approvalId: request.approvalId,
      turnId,
      conversationId,
      toolCallId: request.toolCallId,
      toolName: 'transfer',
      args: { to: 'alice', amount: 5 },
      requestedAt: expect.any(String),
      expiresAt: request.expiresAt,
    });

    // The owner's session token (a browser's) may list and decide, as the API key may.
    const session = apiClient(harness.stack.url, (await harness.api.post('/v1/session-tokens', {})).body.token);
    expect((await session.get('/v1/approvals')).body.data.map((each: any) => each.approvalId)).toContain(request.approvalId);
    const decided = await session.post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: true });
    expect(decided.status).toBe(200);
    expect(decided.body).toEqual({ toolCallId: request.toolCallId, approved: true, reason: null, args: { to: 'alice', amount: 5 }, decidedAt: expect.any(String) });
    expect(await pendingGauge()).toBe(0);
    const events = (await client.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
    expect(events.at(-1).type).toBe('turn-finish');
    expect(eventsOfType(events, 'tool-approval-response')).toEqual([expect.objectContaining({ toolCallId: request.toolCallId, approved: true })]);
    const types = events.map((event) => event.type);
    // All four are there, so that an order of indexes is not one of a missing event (-1).
    expect(types).toEqual(expect.arrayContaining(['tool_processing_start', 'tool-approval-request', 'tool-approval-response', 'tool-result']));
    expect(types.indexOf('tool_processing_start')).toBeLessThan(types.indexOf('tool-approval-request'));
    expect(types.indexOf('tool-approval-response')).toBeLessThan(types.indexOf('tool-result'));
    expect(eventsOfType(events, 'tool-result')).toEqual([expect.objectContaining({ toolCallId: request.toolCallId, result: { done: true, sent: { to: 'alice', amount: 5 } } })]);

    const ran = transfersTo('alice');
    expect(ran).toHaveLength(1);
    expect(ran[0]!.headers['idempotency-key']).toBe(`${turnId}:${request.toolCallId}`);
    expect(harness.providerRequests(marker)).toHaveLength(2);
    // Decided: no longer pending; the same decision again answers the stored one, the opposite one 409.
    expect((await harness.api.get('/v1/approvals')).body.data.map((each: any) => each.approvalId)).not.toContain(request.approvalId);
    const again = await harness.api.post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: true });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(decided.body);
    const opposite = await harness.api.post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: false });
    expect(opposite.status).toBe(409);
    expect(opposite.body.error).toMatchObject({ code: 'already_decided', details: decided.body });
    expect(transfersTo('alice')).toHaveLength(1);
  });

  it('never runs a denied call: the model gets the denied error as its result', async () => {
    const { client, turnId, marker, requests } = await startGatedTurn([transferTo('mallory')]);
    const [request] = requests;
    const denied = await harness.api.post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: false, reason: 'not this payee' });
    expect(denied.status).toBe(200);
    expect(denied.body).toMatchObject({ approved: false, reason: 'not this payee', args: null });
    const events = (await client.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
    expect(events.at(-1).type).toBe('turn-finish');
    expect(eventsOfType(events, 'tool-approval-response')).toEqual([expect.objectContaining({ approved: false, reason: 'not this payee' })]);
    expect(eventsOfType(events, 'tool-result')).toEqual([
      expect.objectContaining({ toolCallId: request.toolCallId, error: { code: 'denied', message: 'not this payee' }, attempts: 0 }),
    ]);
    expect(harness.providerRequests(marker)[1].messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: request.toolCallId,
      content: JSON.stringify({ error: { code: 'denied', message: 'not this payee' } }),
    });
    expect(transfersTo('mallory')).toHaveLength(0);
  });

  it('decides over the websocket frame, and runs edited args', async () => {
    const { client, turnId, requests } = await startGatedTurn([transferTo('bob', 500)]);
    const [request] = requests;
    client.send({ type: 'tool-approval', turnId, toolCallId: request.toolCallId, approved: true, args: { to: 'bob', amount: 50 } });
    const ack = await client.waitFor((frame) => frame.type === 'tool-approval-ack');
    expect(ack).toMatchObject({ turnId, toolCallId: request.toolCallId, approved: true, args: { to: 'bob', amount: 50 } });
    const events = (await client.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
    expect(eventsOfType(events, 'tool-result')).toEqual([expect.objectContaining({ result: { done: true, sent: { to: 'bob', amount: 50 } } })]);
    expect(transfersTo('bob').map((each) => each.body)).toEqual([{ to: 'bob', amount: 50 }]);
  });

  it('refuses bad frames as the route refuses bad decisions: invalid_request, then already_decided with the stored decision', async () => {
    const { client, turnId, requests } = await startGatedTurn([transferTo('grace')]);
    const [request] = requests;
    const ids = { turnId, toolCallId: request.toolCallId };
    const isError = (code: string) => (frame: any) => frame.type === 'error' && frame.code === code && frame.toolCallId === request.toolCallId;
    client.send({ type: 'tool-approval', ...ids, approved: true, args: { to: 'grace', amount: 'lots' } });
    expect(await client.waitFor(isError('invalid_request'))).toMatchObject({ ...ids, message: expect.stringMatching(/args do not fit/) });
    expect(transfersTo('grace')).toHaveLength(0);

    client.send({ type: 'tool-approval', ...ids, approved: false, reason: 'first device' });
    const ack = await client.waitFor((frame) => frame.type === 'tool-approval-ack' && frame.toolCallId === request.toolCallId);
    client.send({ type: 'tool-approval', ...ids, approved: true });
    const refused = await client.waitFor(isError('already_decided'));
    const { type: _type, turnId: _turnId, ...stored } = ack;
    expect(refused).toMatchObject({ ...ids, details: stored });
    expect(stored).toMatchObject({ approved: false, reason: 'first device', args: null });
    expect((await client.waitForTurnEnd(turnId)).at(-1).type).toBe('turn-finish');
    expect(transfersTo('grace')).toHaveLength(0);
  });

  it("takes a decision while the step's other calls still run: the approved call runs once, before them, and the turn completes", async () => {
    let release = () => {};
    const held = new Promise<void>((resolve) => (release = resolve));
    let onArrived = () => {};
    const arrived = new Promise<void>((resolve) => (onArrived = resolve));
    server.route('/slow-lookup', () => (onArrived(), { body: { balance: 7 }, until: held }));
    const { client, turnId, marker, requests } = await startGatedTurn([{ name: 'slow_lookup', arguments: {} }, transferTo('heidi')]);
    const [request] = requests;
    await arrived;

    const decided = await harness.api.post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: true });
    expect(decided.status).toBe(200);
    const transferred = (await client.waitFor((frame) => isEvent('tool-result', turnId)(frame) && frame.event.toolCallId === request.toolCallId)).event;
    expect(transferred).toMatchObject({ result: { done: true, sent: { to: 'heidi', amount: 5 } } });
    expect(client.events().filter((event) => event.turnId === turnId && event.type === 'tool-result')).toHaveLength(1);

    release();
    const events = (await client.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
    expect(eventsOfType(events, 'turn-finish')).toHaveLength(1);
    expect(eventsOfType(events, 'tool-result').map((event) => event.result)).toEqual([{ done: true, sent: { to: 'heidi', amount: 5 } }, { balance: 7 }]);
    expect(transfersTo('heidi')).toHaveLength(1);
    expect(harness.providerRequests(marker)).toHaveLength(2);
  });

  it("runs the step's other calls meanwhile; two devices deciding at once: one decision wins", async () => {
    const { client, turnId, requests } = await startGatedTurn([{ name: 'lookup', arguments: {} }, transferTo('carol')]);
    const [request] = requests;
    const lookupResult = (await client.waitFor((frame) => isEvent('tool-result', turnId)(frame) && frame.event.toolCallId !== request.toolCallId)).event;
    expect(lookupResult).toMatchObject({ result: { balance: 12 } });
    await waitForStatus(turnId, 'waiting_approval', client);

    const [first, second] = await Promise.all([
      harness.api.post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: true }),
      harness.api.post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: false, reason: 'other device' }),
    ]);
    const statuses = [first.status, second.status].sort();
    expect(statuses).toEqual([200, 409]);
    const winner = first.status === 200 ? first.body : second.body;
    const loser = first.status === 409 ? first.body : second.body;
    expect(loser.error).toMatchObject({ code: 'already_decided', details: winner });
    const events = (await client.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
    expect(events.at(-1).type).toBe('turn-finish');
    expect(eventsOfType(events, 'tool-approval-response')).toHaveLength(1);
    expect(transfersTo('carol')).toHaveLength(winner.approved ? 1 : 0);
  });

  it('denies with approval_timeout when nobody decides by expiresAt', async () => {
    const { client, turnId, marker, requests } = await startGatedTurn([{ name: 'quick_transfer', arguments: { to: 'dave' } }]);
    const [request] = requests;
    expect(Date.parse(request.expiresAt) - Date.now()).toBeLessThanOrEqual(1000);
    const events = (await client.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
    expect(events.at(-1).type).toBe('turn-finish');
    expect(eventsOfType(events, 'tool-approval-response')).toEqual([expect.objectContaining({ approved: false })]);
    const timedOut = { code: 'approval_timeout', message: 'no decision before the approval expired' };
    expect(eventsOfType(events, 'tool-result')).toEqual([expect.objectContaining({ toolCallId: request.toolCallId, error: timedOut })]);
    expect(harness.providerRequests(marker)[1].messages.at(-1)).toEqual({ role: 'tool', tool_call_id: request.toolCallId, content: JSON.stringify({ error: timedOut }) });
    const late = await harness.api.post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: true });
    expect(late.status).toBe(409);
    expect(server.requests.filter((each) => (each.body as any)?.to === 'dave')).toHaveLength(0);
  });

  it('gates tools named by requireApproval on the turn and on the conversation; unknown names are 400', async () => {
    const turnGated = await startGatedTurn([{ name: 'calculator', arguments: { expression: '1+1' } }], 1, { requireApproval: ['calculator'] });
    expect(turnGated.requests[0]).toMatchObject({ toolName: 'calculator' });
    await harness.api.post(`/v1/turns/${turnGated.turnId}/approvals`, { toolCallId: turnGated.requests[0].toolCallId, approved: true });
    expect((await turnGated.client.waitForTurnEnd(turnGated.turnId)).at(-1).type).toBe('turn-finish');

    const conversation = await harness.api.post('/v1/conversations', { requireApproval: ['calculator'] });
    expect(conversation.status).toBe(201);
    expect(conversation.body.requireApproval).toEqual(['calculator']);
    const run = await harness.subscribe(conversation.body.id);
    const { turnId } = await harness.postTurn(conversation.body.id, { steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '2+2' } }] }, { text: 'ok' }] });
    const request = (await run.waitFor(isEvent('tool-approval-request', turnId))).event;
    await harness.api.post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: false });
    expect((await run.waitForTurnEnd(turnId)).at(-1).type).toBe('turn-finish');

    const badTurn = await harness.api.post(`/v1/conversations/${conversation.body.id}/turns`, { content: 'x', requireApproval: ['nope'] });
    expect(badTurn.status).toBe(400);
    expect(badTurn.body.error.details).toEqual([{ field: 'requireApproval', message: 'unknown tool "nope"' }]);
    expect((await harness.api.post('/v1/conversations', { requireApproval: ['nope'] })).status).toBe(400);
  });

  it('refuses bad decisions with clear 4xx answers, and nothing runs', async () => {
    const { client, turnId, requests } = await startGatedTurn([transferTo('erin'), { name: 'lookup', arguments: {} }]);
    const [request] = requests;
    await waitForStatus(turnId, 'waiting_approval', client);
    const lookupCall = (await harness.api.get(`/v1/turns/${turnId}`)).body.toolCalls.find((call: any) => call.toolName === 'lookup');

    const unknown = await harness.api.post(`/v1/turns/${turnId}/approvals`, { toolCallId: 'call_nope', approved: true });
    expect(unknown.status).toBe(404);
    const notGated = await harness.api.post(`/v1/turns/${turnId}/approvals`, { toolCallId: lookupCall.toolCallId, approved: true });
    expect(notGated.status).toBe(400);
    expect(notGated.body.error.message).toMatch(/needs no approval/);
    const badArgs = await harness.api.post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: true, args: { to: 'erin', amount: 'lots' } });
    expect(badArgs.status).toBe(400);
    expect(badArgs.body.error.details).toEqual([expect.objectContaining({ field: 'args' })]);
    const badBody = await harness.api.post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId });
    expect(badBody.status).toBe(400);
    const other = await harness.stack.createUser('someone-else');
    const theirs = await apiClient(harness.stack.url, other.apiKey).post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: true });
    expect(theirs.status).toBe(404);
    expect((await apiClient(harness.stack.url, other.apiKey).get('/v1/approvals')).body.data).toEqual([]);

    // Nothing of the above decided or ran anything.
    expect((await harness.api.get(`/v1/turns/${turnId}`)).body.toolCalls.find((call: any) => call.toolCallId === request.toolCallId)).toMatchObject({
      status: 'awaiting_approval',
    });
    expect(transfersTo('erin')).toHaveLength(0);
    await harness.api.post(`/v1/turns/${turnId}/cancel`, {});
    expect((await client.waitForTurnEnd(turnId)).at(-1).type).toBe('turn-cancelled');
    const afterCancel = await harness.api.post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: true });
    expect(afterCancel.status).toBe(400);
    expect(transfersTo('erin')).toHaveLength(0);
  });

  it('refuses an approval that a cancel overtakes after its checks: 400, no decision stored or announced, nothing runs', async () => {
    const { client, turnId, requests } = await startGatedTurn([transferTo('frank')]);
    const [request] = requests;
    await waitForStatus(turnId, 'waiting_approval', client);
    const { db, toolCalls, toolApprovals } = harness.stack.resources;
    // A cancel holds the call's row while the decision, its checks passed, waits to move the call on, and commits first.
    let deciding: Promise<{ status: number; body: any }> | undefined;
    await db.transaction(async (tx) => {
      await tx.query('SELECT 1 FROM tool_calls WHERE turn_id = $1 AND tool_call_id = $2 FOR UPDATE', [turnId, request.toolCallId]);
      deciding = harness.api.post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: true });
      await waitUntilStatementWaitsForLock(db, "UPDATE tool_calls SET status = 'pending'");
      await toolCalls.cancelUnsettled(turnId, { code: 'cancelled', message: 'the turn was cancelled' }, tx);
    });
    const decided = await deciding!;
    expect(decided.status).toBe(400);
    expect(decided.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(/no longer waits/) });

    await harness.api.post(`/v1/turns/${turnId}/cancel`, {});
    const events = (await client.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
    expect(events.at(-1).type).toBe('turn-cancelled');
    expect(eventsOfType(events, 'tool-approval-response')).toEqual([]);
    expect((await toolApprovals.listForStep(turnId, 1)).map((approval) => approval.decision ?? null)).toEqual([null]);
    expect(transfersTo('frank')).toHaveLength(0);
  });

  it('asks clients to run an approved client tool only after the approval', async () => {
    const { client, turnId, requests } = await startGatedTurn([{ name: 'open_file', arguments: { path: '/etc/hosts' } }]);
    const [request] = requests;
    await waitForStatus(turnId, 'waiting_approval', client);
    expect(client.frames.some((frame: any) => isEvent('tool-call-request', turnId)(frame))).toBe(false);
    // An answer before the approval is not taken.
    const early = await harness.api.post(`/v1/turns/${turnId}/tool-results`, { toolCallId: request.toolCallId, result: 'sneaky' });
    expect(early.body).toMatchObject({ accepted: false });

    await harness.api.post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: true });
    const asked = (await client.waitFor(isEvent('tool-call-request', turnId))).event;
    expect(asked).toMatchObject({ toolCallId: request.toolCallId, toolName: 'open_file', args: { path: '/etc/hosts' } });
    const answered = await harness.api.post(`/v1/turns/${turnId}/tool-results`, { toolCallId: request.toolCallId, result: '127.0.0.1 localhost' });
    expect(answered.body).toEqual({ accepted: true });
    const events = (await client.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
    expect(events.at(-1).type).toBe('turn-finish');
    expect(eventsOfType(events, 'tool-result')).toEqual([expect.objectContaining({ toolCallId: request.toolCallId, result: '127.0.0.1 localhost' })]);
  });

  it("refuses unknown tool names in a batch's defaults.requireApproval", async () => {
    const refused = await harness.api.post('/v1/batches', { items: [{ messages: ['hi'] }], defaults: { requireApproval: ['nope'] } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([{ line: 0, field: 'defaults.requireApproval', message: 'unknown tool "nope"' }]);
  });

  it('leaves a turn with no gated call unchanged: no approval events', async () => {
    const run = await harness.runTurn({ steps: [{ toolCalls: [{ name: 'lookup', arguments: {} }] }, { text: 'ok' }] });
    expect(run.events.at(-1).type).toBe('turn-finish');
    expect(run.events.filter((event) => event.type.startsWith('tool-approval'))).toEqual([]);
  });
});

describe('a turn waiting for approval, with one worker slot', () => {
  let harness: ToolTurnHarness;

  beforeAll(async () => {
    harness = await startToolTurnHarness({ env: { WORKER_CONCURRENCY: '1' } });
  });
  afterAll(() => harness.close());

  it("holds no worker: another conversation's turn runs to its end while it waits, and the decision resumes it", async () => {
    const waiting = await harness.newConversation({ requireApproval: ['calculator'] });
    const waitingClient = await harness.subscribe(waiting);
    const { turnId } = await harness.postTurn(waiting, { steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }] }, { text: 'done' }] });
    const request = (await waitingClient.waitFor(isEvent('tool-approval-request', turnId))).event;
    await waitingClient.waitFor(isEvent('turn-waiting', turnId));

    const other = await harness.runTurn({ text: 'I ran while the other turn waited' });
    expect(other.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    expect((await harness.api.get(`/v1/turns/${turnId}`)).body.status).toBe('waiting_approval');

    expect((await harness.api.post(`/v1/turns/${turnId}/approvals`, { toolCallId: request.toolCallId, approved: true })).status).toBe(200);
    const events = (await waitingClient.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    expect(eventsOfType(events, 'tool-result')).toEqual([expect.objectContaining({ toolCallId: request.toolCallId, result: { expression: '6*7', result: 42 } })]);
  });
});
