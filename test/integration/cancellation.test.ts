import { visibleStepTexts } from '../support/client-view';
import { httpToolEntry, startToolHttpServer, type ToolHttpServer } from '../support/tool-servers';
import { eventsOfType, startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';
import type { TestWsClient } from '../support/ws-client';

/**
 * `POST /v1/turns/:id/cancel` and `onBusy: "interrupt"`: the provider stream and the turn's tool
 * jobs stop, `turn-cancelled` is the turn's last event, what the stopped step had streamed is
 * kept as an incomplete message (cancel-keeps-streamed-text.test.ts looks at it in every view),
 * and the history left behind is one the provider accepts (the scripted model answers 400 to a tool
 * call without its tool message, as OpenAI does, so the next turn completing proves it).
 *
 * WORKER_CONCURRENCY=1: one turn job and one tool job at a time. A stream or a tool request
 * that were not aborted would hold the only slot, so the next job running proves the abort.
 */
describe('cancellation and interrupts', () => {
  let server: ToolHttpServer;
  let harness: ToolTurnHarness;
  /** A turn whose stream sends three tokens, then holds the connection (until the provider idle timeout of 60 s). */
  const stalledStream = { tokens: 50, stallAfterTokens: 3 };

  beforeAll(async () => {
    server = await startToolHttpServer();
    server.route('/stuck', { hang: true });
    const tool = (name: string) => httpToolEntry(server.url, name, { timeoutMs: 30_000, retries: 0 });
    harness = await startToolTurnHarness({
      env: { WORKER_CONCURRENCY: '1' },
      toolFiles: { 'tools.json': { tools: [tool('stuck'), tool('record')] } },
    });
  });
  afterAll(async () => {
    await harness.close();
    await server.close();
  });

  const turnEvents = (client: TestWsClient, turnId: string) => client.events().filter((event) => event.turnId === turnId);
  const requestsTo = (path: string) => server.requests.filter((request) => request.path === path);
  const storedMessages = async (conversationId: string) =>
    (await harness.api.get(`/v1/conversations/${conversationId}`)).body.messages as { role: string; turnId: string; content: unknown; incomplete?: true }[];

  it('aborts a streaming turn, keeps what it had streamed as an incomplete message and starts the turn queued behind it', async () => {
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const { turnId } = await harness.postTurn(conversationId, stalledStream);
    await client.waitFor((frame) => frame.type === 'event' && frame.event.turnId === turnId && frame.event.type === 'text-delta');
    const queued = await harness.postTurn(conversationId, { text: 'the queued answer' }, { onBusy: 'enqueue' });

    const cancelled = await harness.api.post(`/v1/turns/${turnId}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    await client.waitForTurnEnd(queued.turnId);
    expect(turnEvents(client, turnId).at(-1).type).toBe('turn-cancelled');
    expect(turnEvents(client, queued.turnId).at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });

    // The stalled stream was aborted at once: the only turn slot serves another conversation.
    const elsewhere = await harness.runTurn({ text: 'another conversation' });
    expect(elsewhere.events.at(-1).type).toBe('turn-finish');

    const messages = await storedMessages(conversationId);
    expect(messages.map((message) => [message.role, message.turnId, message.incomplete ?? false])).toEqual([
      ['user', turnId, false],
      ['assistant', turnId, true],
      ['user', queued.turnId, false],
      ['assistant', queued.turnId, false],
    ]);
    expect(messages[1]!.content).toBe(visibleStepTexts(turnEvents(client, turnId)).get(1));
    expect(messages[3]!.content).toBe('the queued answer');
    expect((await harness.api.get(`/v1/turns/${turnId}`)).body).toMatchObject({ status: 'cancelled', finishReason: 'cancelled', partialToolCalls: [] });
  });

  it('aborts the running tool request, never runs the pending one, and leaves a history the provider accepts', async () => {
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const stuckBefore = requestsTo('/stuck').length;
    const before = server.requests.length;
    const { turnId, marker } = await harness.postTurn(conversationId, {
      steps: [
        {
          toolCalls: [
            { name: 'stuck', arguments: { n: 1 } },
            { name: 'stuck', arguments: { n: 2 } },
          ],
        },
        { text: 'never' },
      ],
    });
    // One tool slot: the first call's request hangs there, the second call's job waits.
    const running = (await server.waitForRequests(before + 1))[before]!;
    expect(running.path).toBe('/stuck');

    expect((await harness.api.post(`/v1/turns/${turnId}/cancel`)).body.status).toBe('cancelled');
    await server.waitForAbort(running, 3_000);
    await client.waitForTurnEnd(turnId);
    const turn = await harness.api.get(`/v1/turns/${turnId}`);
    expect(turn.body.toolCalls.map((call: any) => [call.status, call.attempts])).toEqual(
      [1, 2].map((n) => ((running.body as { n: number }).n === n ? ['cancelled', 1] : ['cancelled', 0])),
    );

    // The waiting job comes before this turn's in the tool queue: by the time `record` is
    // called, it has been taken and found its call cancelled.
    const next = await harness.runTurn({ steps: [{ toolCalls: [{ name: 'record', arguments: { n: 3 } }] }, { text: 'after the cancel' }] }, { conversationId });
    expect(next.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    expect(requestsTo('/stuck').length - stuckBefore).toBe(1);
    expect(turnEvents(client, turnId).at(-1).type).toBe('turn-cancelled');
    expect(eventsOfType(turnEvents(client, turnId), 'tool-result')).toEqual([]);

    // What the model was sent: the cancelled calls, each answered by a `cancelled` tool message.
    const [firstRequest] = harness.providerRequests(next.marker);
    const cancelledTurnMessages = firstRequest.messages.slice(
      firstRequest.messages.findIndex((message: any) => message.role === 'user' && String(message.content).includes(marker)),
    );
    expect(cancelledTurnMessages.map((message: any) => message.role).slice(0, 4)).toEqual(['user', 'assistant', 'tool', 'tool']);
    for (const message of cancelledTurnMessages.slice(2, 4)) expect(JSON.parse(message.content)).toMatchObject({ error: { code: 'cancelled' } });
  });

  it('interrupts a streaming turn: it is cancelled, then the new turn runs', async () => {
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const first = await harness.postTurn(conversationId, stalledStream);
    await client.waitFor((frame) => frame.type === 'event' && frame.event.turnId === first.turnId && frame.event.type === 'text-delta');

    const second = await harness.postTurn(conversationId, { text: 'the interrupting answer' }, { onBusy: 'interrupt' });
    // It runs in the only turn slot, which the interrupted stream held.
    await client.waitForTurnEnd(second.turnId);
    const events = client.events();
    const cancelledAt = events.findIndex((event) => event.turnId === first.turnId && event.type === 'turn-cancelled');
    const startedAt = events.findIndex((event) => event.turnId === second.turnId && event.type === 'turn-start');
    expect(cancelledAt).toBeGreaterThan(-1);
    expect(cancelledAt).toBeLessThan(startedAt);
    expect(turnEvents(client, first.turnId).at(-1).type).toBe('turn-cancelled');
    expect(turnEvents(client, second.turnId).at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    expect((await harness.api.get(`/v1/turns/${first.turnId}`)).body).toMatchObject({ status: 'cancelled', finishReason: 'interrupted' });

    const messages = await storedMessages(conversationId);
    expect(messages.map((message) => [message.role, message.turnId, message.incomplete ?? false])).toEqual([
      ['user', first.turnId, false],
      ['assistant', first.turnId, true],
      ['user', second.turnId, false],
      ['assistant', second.turnId, false],
    ]);
    expect(messages[1]!.content).toBe(visibleStepTexts(turnEvents(client, first.turnId)).get(1));
    expect(messages[3]!.content).toBe('the interrupting answer');
  });

  it('interrupts a turn in its tool phase: the tool request is aborted and the new turn runs on a repaired history', async () => {
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const before = server.requests.length;
    const first = await harness.postTurn(conversationId, { steps: [{ toolCalls: [{ name: 'stuck', arguments: { n: 4 } }] }, { text: 'never' }] });
    const running = (await server.waitForRequests(before + 1))[before]!;
    expect(running.body).toEqual({ n: 4 });

    const second = await harness.postTurn(conversationId, { text: 'a fresh start' }, { onBusy: 'interrupt' });
    await server.waitForAbort(running, 3_000);
    await client.waitForTurnEnd(second.turnId);
    expect(turnEvents(client, first.turnId).at(-1).type).toBe('turn-cancelled');
    expect(turnEvents(client, second.turnId).at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });

    const [request] = harness.providerRequests(second.marker);
    const roles = request.messages.map((message: any) => message.role);
    expect(roles.slice(-4)).toEqual(['user', 'assistant', 'tool', 'user']);
    expect(JSON.parse(request.messages.at(-2).content)).toMatchObject({ error: { code: 'cancelled', message: expect.stringContaining('interrupted') } });
  });
});
