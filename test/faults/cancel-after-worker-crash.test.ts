import { tokenize } from '../../src/scripted-model/tokenize';
import { eventsOfTurn, startedAttempts, visibleStepTexts } from '../support/client-view';
import { faultProcesses } from '../support/fault-processes';
import { apiClient } from '../support/http';
import { checkInvariants } from '../support/invariants';
import { waitForNoJobLeft } from '../support/job-counts';
import { poll } from '../support/poll';
import { TEST_REDIS_URL } from '../support/services';
import { startTcpProxy } from '../support/tcp-proxy';
import { eventsOfType, startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';

/**
 * docs/RELIABILITY.md case 44 with a real worker process SIGKILLed mid-stream: the cancel that
 * follows is the API's alone, and keeps what the dead worker's clients saw (the event log's
 * deltas, not any worker's memory) as the turn's incomplete message, once, also when a worker
 * takes the dead one's job up afterwards, or took the turn over before the cancel; and an API
 * that cannot read the log refuses the cancel rather than losing the text. Short locks (2 s,
 * stall checks every 500 ms) so that a dead worker's job is taken back within seconds.
 */
describe('a cancel after the streaming worker was SIGKILLed', () => {
  let harness: ToolTurnHarness;
  const processes = faultProcesses(() => harness.stack);

  beforeAll(async () => {
    harness = await startToolTurnHarness({ workers: 0, env: { LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '500' } });
  });
  afterEach(() => processes.stopAll());
  afterAll(() => harness.close());

  const textDeltas = (turnId: string) => (frame: any) => frame.type === 'event' && frame.event.turnId === turnId && frame.event.type === 'text-delta';
  const assistantMessages = async (conversationId: string, turnId: string) =>
    ((await harness.api.get(`/v1/conversations/${conversationId}`)).body.messages as any[]).filter((message) => message.role === 'assistant' && message.turnId === turnId);

  it('keeps the text the dead worker had streamed, exactly once, and the next turn sends it to the model', async () => {
    const victim = await processes.spawn('worker');
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const { turnId, marker } = await harness.postTurn(conversationId, { tokens: 400, tokenDelayMs: 10 });
    await client.waitFor(() => (visibleStepTexts(eventsOfTurn(client.events(), turnId)).get(1) ?? '').length > 20);

    await victim.kill('SIGKILL');
    // No worker is left: the API alone ends the turn, from what the log holds.
    expect((await harness.api.post(`/v1/turns/${turnId}/cancel`)).body.status).toBe('cancelled');
    const events = eventsOfTurn(await client.waitForTurnEnd(turnId), turnId);
    expect(events.at(-1).type).toBe('turn-cancelled');
    const shown = visibleStepTexts(events).get(1)!;
    expect(shown).toMatch(/^lorem ipsum/);
    expect(await assistantMessages(conversationId, turnId)).toEqual([expect.objectContaining({ content: shown, incomplete: true })]);

    // A worker takes the dead one's job up: it finds the turn cancelled and writes nothing.
    await processes.addWorker();
    await waitForNoJobLeft(harness.stack.resources.turnQueue);
    expect(await assistantMessages(conversationId, turnId)).toEqual([expect.objectContaining({ content: shown, incomplete: true })]);
    expect(await checkInvariants(harness.stack.resources.db, { turnIds: [turnId], toolExecutions: [], events })).toEqual({ [turnId]: 'cancelled' });

    const next = await harness.runTurn({ text: 'after the crash' }, { conversationId });
    expect(next.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
    const [request] = harness.providerRequests(next.marker);
    const fromCancelled = request.messages.slice(request.messages.findIndex((message: any) => message.role === 'user' && String(message.content).includes(marker)));
    expect(fromCancelled.map((message: any) => [message.role, message.role === 'assistant' ? message.content : 'input'])).toEqual([
      ['user', 'input'],
      ['assistant', shown],
      ['user', 'input'],
    ]);
  });

  it('keeps only what the attempt after the dead one streamed, once that attempt had discarded it', async () => {
    const victim = await processes.spawn('worker');
    const conversationId = await harness.newConversation();
    const client = await harness.subscribe(conversationId);
    const { turnId } = await harness.postTurn(conversationId, {
      attempts: [
        { tokens: 400, tokenDelayMs: 10 },
        { text: 'the second attempt was stopped here', stallAfterTokens: 3 },
      ],
    });
    await client.waitFor(textDeltas(turnId));

    await processes.addWorker();
    await victim.kill('SIGKILL');
    await client.waitFor(() => visibleStepTexts(eventsOfTurn(client.events(), turnId)).get(1) === 'the second attempt');
    expect((await harness.api.post(`/v1/turns/${turnId}/cancel`)).body.status).toBe('cancelled');
    const events = eventsOfTurn(await client.waitForTurnEnd(turnId), turnId);
    expect(startedAttempts(events)).toEqual([1, 2]);
    expect(eventsOfType(events, 'attempt-discarded')).toEqual([expect.objectContaining({ attempt: 1, step: 1 })]);

    expect(await assistantMessages(conversationId, turnId)).toEqual([expect.objectContaining({ content: 'the second attempt', incomplete: true })]);
    expect((await harness.api.get(`/v1/turns/${turnId}`)).body).toMatchObject({ status: 'cancelled', attempt: 2, incompleteMessage: { step: 1, content: 'the second attempt' } });
    await checkInvariants(harness.stack.resources.db, { turnIds: [turnId], toolExecutions: [], events });
  });

  it('refuses the cancel with 503 while the API cannot reach Redis, changing nothing; once it can, the cancel keeps the text', async () => {
    await processes.addWorker();
    const redisProxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(TEST_REDIS_URL).port) });
    try {
      const cut = apiClient((await processes.spawn('api', { REDIS_URL: redisProxy.urlFor(TEST_REDIS_URL) })).url, harness.apiKey);
      const conversationId = await harness.newConversation();
      const client = await harness.subscribe(conversationId);
      const text = 'Streamed before the API lost Redis';
      const { turnId } = await harness.postTurn(conversationId, { text: `${text}, and more.`, stallAfterTokens: tokenize(text).length });
      await client.waitFor(() => visibleStepTexts(eventsOfTurn(client.events(), turnId)).get(1) === text);

      redisProxy.cut();
      const refused = await cut.post(`/v1/turns/${turnId}/cancel`);
      expect(refused).toMatchObject({ status: 503, body: { error: { code: 'unavailable' } } });
      expect((await harness.api.get(`/v1/turns/${turnId}`)).body.status).toBe('running');
      expect(await assistantMessages(conversationId, turnId)).toEqual([]);

      redisProxy.restore();
      // The API's connection comes back on its own; the same cancel then goes through.
      await poll('the cancel was refused after Redis came back', async () => (await cut.post(`/v1/turns/${turnId}/cancel`)).status === 200, 20_000);
      const events = eventsOfTurn(await client.waitForTurnEnd(turnId), turnId);
      expect(await assistantMessages(conversationId, turnId)).toEqual([expect.objectContaining({ content: text, incomplete: true })]);
      expect(await checkInvariants(harness.stack.resources.db, { turnIds: [turnId], toolExecutions: [], events })).toEqual({ [turnId]: 'cancelled' });
    } finally {
      await redisProxy.close();
    }
  });
});
