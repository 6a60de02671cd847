import { eventsOfType, startToolTurnHarness, type ToolTurnHarness } from '../../support/tool-turns';
import type { TestWsClient } from '../../support/ws-client';
import { isEvent } from '../../support/ws-client';

const clientTools = {
  'client-tools.json': {
    tools: [
      { kind: 'client', name: 'confirm', description: 'Asks the user to confirm', timeoutMs: 20_000, fields: [{ name: 'question', required: true }] },
      { kind: 'client', name: 'never_answered', description: 'Nobody answers this one', timeoutMs: 400 },
    ],
  },
};

/** Tools run by a subscribed client: asked over the websocket, answered over it or over HTTP. */
describe('client tools', () => {
  let harness: ToolTurnHarness;

  beforeAll(async () => {
    harness = await startToolTurnHarness({ toolFiles: clientTools });
  });
  afterAll(() => harness.close());

  const confirmScenario = { steps: [{ toolCalls: [{ name: 'confirm', arguments: { question: 'Ship it?' } }] }, { text: 'shipped' }] };

  async function startConfirmTurn(): Promise<{ client: TestWsClient; turnId: string; marker: string; request: any }> {
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const { turnId, marker } = await harness.postTurn(conversationId, confirmScenario);
    const request = (await client.waitFor(isEvent('tool-call-request', turnId))).event;
    expect(request).toMatchObject({ toolName: 'confirm', args: { question: 'Ship it?' } });
    return { client, turnId, marker, request };
  }

  it('takes an answer over the websocket; a replayed request answered again is acknowledged as ignored and runs nothing twice', async () => {
    const { client, turnId, marker, request } = await startConfirmTurn();
    await client.waitFor(isEvent('turn-waiting', turnId));
    expect((await harness.api.get(`/v1/turns/${turnId}`)).body.status).toBe('waiting_tools');

    client.send({ type: 'tool-result', turnId, toolCallId: request.toolCallId, result: { confirmed: true } });
    const ack = await client.waitFor((frame) => frame.type === 'tool-result-ack');
    expect(ack).toEqual({ type: 'tool-result-ack', turnId, toolCallId: request.toolCallId, accepted: true });
    const result = (await client.waitFor(isEvent('tool-result', turnId))).event;
    expect(result).toMatchObject({ toolCallId: request.toolCallId, result: { confirmed: true }, attempts: 1 });

    // Another tab subscribes from before the request: the request is replayed to it, and it
    // answers as any client would. The first answer won; this one is acknowledged and ignored.
    const replaying = await harness.subscribe(request.conversationId, request.seq - 1);
    const replayed = (await replaying.waitFor(isEvent('tool-call-request', turnId))).event;
    expect(replayed).toMatchObject({ seq: request.seq, toolCallId: request.toolCallId });
    replaying.send({ type: 'tool-result', turnId, toolCallId: request.toolCallId, result: { confirmed: false } });
    expect(await replaying.waitFor((frame) => frame.type === 'tool-result-ack')).toEqual({
      type: 'tool-result-ack',
      turnId,
      toolCallId: request.toolCallId,
      accepted: false,
    });

    const events = (await replaying.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
    expect(eventsOfType(events, 'turn-finish')).toHaveLength(1);
    expect(eventsOfType(events, 'tool-result')).toEqual([expect.objectContaining({ toolCallId: request.toolCallId, result: { confirmed: true } })]);
    // The turn went on once, with the first answer: one follow-up request, one tool message.
    const requests = harness.providerRequests(marker);
    expect(requests).toHaveLength(2);
    expect(requests[1].messages.filter((message: any) => message.role === 'tool')).toEqual([
      { role: 'tool', tool_call_id: request.toolCallId, content: JSON.stringify({ confirmed: true }) },
    ]);
    const turn = await harness.api.get(`/v1/turns/${turnId}`);
    expect(turn.body).toMatchObject({ status: 'completed' });
    expect(turn.body.toolCalls).toEqual([expect.objectContaining({ kind: 'client', status: 'succeeded', result: { confirmed: true } })]);
  });

  it('takes an answer over POST /v1/turns/:id/tool-results, the first one winning', async () => {
    const { client, turnId, marker, request } = await startConfirmTurn();
    const answered = await harness.api.post(`/v1/turns/${turnId}/tool-results`, { toolCallId: request.toolCallId, error: { code: 'declined', message: 'the user said no' } });
    expect(answered.status).toBe(200);
    expect(answered.body).toEqual({ accepted: true });
    const again = await harness.api.post(`/v1/turns/${turnId}/tool-results`, { toolCallId: request.toolCallId, result: 'yes after all' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ accepted: false });
    const unknown = await harness.api.post(`/v1/turns/${turnId}/tool-results`, { toolCallId: 'call_nope', result: 1 });
    expect(unknown.status).toBe(404);

    const events = (await client.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
    expect(events.at(-1).type).toBe('turn-finish');
    expect(eventsOfType(events, 'tool-result')).toEqual([expect.objectContaining({ toolCallId: request.toolCallId, error: { code: 'declined', message: 'the user said no' } })]);
    const followUp = harness.providerRequests(marker)[1];
    expect(followUp.messages.at(-1)).toEqual({
      role: 'tool',
      tool_call_id: request.toolCallId,
      content: JSON.stringify({ error: { code: 'declined', message: 'the user said no' } }),
    });
  });

  it('gives a call no client answers a timeout error result after the tool timeout, and the turn completes', async () => {
    const run = await harness.runTurn({ steps: [{ toolCalls: [{ name: 'never_answered' }] }, { text: 'nobody answered' }] });
    expect(run.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    const [request] = eventsOfType(run.events, 'tool-call-request');
    expect(eventsOfType(run.events, 'tool-result')).toEqual([
      expect.objectContaining({ toolCallId: request.toolCallId, error: { code: 'timeout', message: expect.stringContaining('400 ms') }, attempts: 0 }),
    ]);
    const followUp = harness.providerRequests(run.marker)[1];
    expect(JSON.parse(followUp.messages.at(-1).content)).toMatchObject({ error: { code: 'timeout' } });

    // Answering after the timeout changes nothing.
    const late = await harness.api.post(`/v1/turns/${run.turnId}/tool-results`, { toolCallId: request.toolCallId, result: 'too late' });
    expect(late.body).toMatchObject({ accepted: false });
  });
});

describe('client tools next to server tools', () => {
  let harness: ToolTurnHarness;

  beforeAll(async () => {
    harness = await startToolTurnHarness({ toolFiles: clientTools });
  });
  afterAll(() => harness.close());

  it('continues the turn when the client answers while the continuation is deciding to wait', async () => {
    // The race, made certain: the answer arrives (over the real API) right after the step's
    // continuation read the calls and saw the client call unanswered, before it parks the turn.
    const turns = harness.stack.resources.turns;
    // The flow's parent reads the step in the statement that takes the turn.
    const beginAttempt = turns.beginAttempt.bind(turns);
    let answered = false;
    turns.beginAttempt = async (...args) => {
      const begun = await beginAttempt(...args);
      const calls = begun?.lastStep?.calls ?? [];
      const client = calls.find((call) => call.kind === 'client');
      const serverSettled = calls.filter((call) => call.kind !== 'client').every((call) => call.status === 'succeeded');
      if (!answered && client && client.status === 'pending' && serverSettled) {
        answered = true;
        const response = await harness.api.post(`/v1/turns/${args[0]}/tool-results`, { toolCallId: client.toolCallId, result: 'yes' });
        expect(response.body).toEqual({ accepted: true });
      }
      return begun;
    };
    try {
      const run = await harness.runTurn({
        steps: [
          {
            toolCalls: [
              { name: 'calculator', arguments: { expression: '1+1' } },
              { name: 'confirm', arguments: { question: 'Now?' } },
            ],
          },
          { text: 'done' },
        ],
      });
      expect(answered).toBe(true);
      expect(run.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
      expect(eventsOfType(run.events, 'tool_processing_complete')).toEqual([expect.objectContaining({ results: 2, failed: 0 })]);
    } finally {
      turns.beginAttempt = beginAttempt;
    }
  });
});

describe('client tools and workers', () => {
  let harness: ToolTurnHarness;

  beforeAll(async () => {
    harness = await startToolTurnHarness({ toolFiles: clientTools, env: { WORKER_CONCURRENCY: '1' } });
  });
  afterAll(() => harness.close());

  it('holds no worker while it waits: with one worker slot, another conversation runs meanwhile', async () => {
    const waiting = await harness.newConversation();
    const waitingClient = await harness.subscribe(waiting);
    const { turnId } = await harness.postTurn(waiting, { steps: [{ toolCalls: [{ name: 'confirm', arguments: { question: 'Wait?' } }] }, { text: 'done' }] });
    const request = (await waitingClient.waitFor(isEvent('turn-waiting', turnId))).event;

    const other = await harness.runTurn({ text: 'I ran while the other turn waited' });
    expect(other.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    expect((await harness.api.get(`/v1/turns/${turnId}`)).body.status).toBe('waiting_tools');

    waitingClient.send({ type: 'tool-result', turnId, toolCallId: request.toolCallIds[0], result: 'yes' });
    const events = await waitingClient.waitForTurnEnd(turnId);
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish', turnId });
  });
});
