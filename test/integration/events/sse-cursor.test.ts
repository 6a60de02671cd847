import { apiClient } from '../../support/http';
import { startTestStack, type TestStack } from '../../support/stack';
import { scripted } from '../../support/tool-turns';
import { TestWsClient } from '../../support/ws-client';

/**
 * An SSE reader resuming from a `Last-Event-ID` the log cannot serve is told so, as a websocket
 * subscriber with such an `after` is (docs/RELIABILITY.md case 30).
 */
describe('GET /v1/turns/:id/events with a Last-Event-ID the log cannot serve, and a websocket subscribe with such an after', () => {
  let stack: TestStack;
  let apiKey: string;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    // The log keeps the last 10 events of a conversation: a turn of 30 text deltas outgrows it.
    stack = await startTestStack({ env: { EVENT_LOG_MAX_LENGTH: '10' } });
    ({ apiKey } = await stack.createUser('sse'));
    api = apiClient(stack.url, apiKey);
  });
  afterAll(() => stack.close());

  /** A turn, run to its end, with `tokens` text deltas; its conversation's last seq. */
  async function finishedTurn(tokens: number): Promise<{ turnId: string; lastSeq: number }> {
    const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
    const client = await TestWsClient.subscribed(stack.url, { apiKey }, conversationId);
    const turnId = (await api.post(`/v1/conversations/${conversationId}/turns`, { content: scripted({ tokens, tokenDelayMs: 5 }) })).body.turnId as string;
    const events = await client.waitForTurnEnd(turnId);
    client.close();
    return { turnId, lastSeq: events.at(-1).seq };
  }

  /**
   * `count` one-token turns on one conversation: five events each, none of which the worker can
   * merge into another (it merges consecutive deltas under load), so that the log certainly holds
   * more whole stream nodes than its 10 kept events need. The conversation, the last turn's id and
   * its events' seqs.
   */
  async function finishedTurns(count: number): Promise<{ conversationId: string; turnId: string; seqs: number[] }> {
    const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
    const client = await TestWsClient.subscribed(stack.url, { apiKey }, conversationId);
    let last = { turnId: '', seqs: [] as number[] };
    for (let turn = 0; turn < count; turn++) {
      const turnId = (await api.post(`/v1/conversations/${conversationId}/turns`, { content: scripted({ tokens: 1 }) })).body.turnId as string;
      const events: { seq: number; turnId: string }[] = await client.waitForTurnEnd(turnId);
      last = { turnId, seqs: events.filter((event) => event.turnId === turnId).map((event) => event.seq) };
    }
    client.close();
    return { conversationId, ...last };
  }

  /** The SSE body for a resume from `lastEventId`, split into its events. */
  async function resume(turnId: string, lastEventId: string): Promise<{ event?: string; data?: string; id?: string }[]> {
    const response = await fetch(`${stack.url}/v1/turns/${turnId}/events`, { headers: { authorization: `Bearer ${apiKey}`, 'last-event-id': lastEventId } });
    expect(response.status).toBe(200);
    return (await response.text())
      .split('\n\n')
      .filter(Boolean)
      .map((block) => Object.fromEntries(block.split('\n').map((line) => [line.slice(0, line.indexOf(':')), line.slice(line.indexOf(':') + 2)])));
  }

  it('answers a Last-Event-ID beyond the latest seq with one error event bad_cursor, then ends', async () => {
    const { turnId, lastSeq } = await finishedTurn(3);
    expect(await resume(turnId, String(lastSeq))).toEqual([]);
    const events = await resume(turnId, String(lastSeq + 5));
    expect(events).toEqual([{ event: 'error', data: expect.any(String) }]);
    expect(JSON.parse(events[0]!.data!)).toMatchObject({ code: 'bad_cursor' });
    expect(JSON.parse((await resume(turnId, 'soon'))[0]!.data!)).toMatchObject({ code: 'bad_cursor' });
  });

  it('answers a Last-Event-ID older than the log keeps with cursor_expired and the oldest seq kept, then ends', async () => {
    // Past a whole stream node (at most 100 entries): trimming works on whole nodes.
    const { turnId, seqs } = await finishedTurns(25);
    const lastSeq = seqs.at(-1)!;
    const events = await resume(turnId, '2');
    expect(events).toHaveLength(1);
    expect(events[0]!.event).toBe('error');
    const error = JSON.parse(events[0]!.data!);
    expect(error).toEqual({ code: 'cursor_expired', message: expect.any(String), oldestSeq: expect.any(Number) });
    // The log keeps its last 10 events and what shares their stream node: seq 3 is long gone.
    expect(error.oldestSeq).toBeGreaterThan(3);
    expect(error.oldestSeq).toBeLessThanOrEqual(lastSeq - 9);
    // From just before the oldest kept event, the rest is replayed.
    const replayed = await resume(turnId, String(error.oldestSeq - 1));
    expect(replayed.map((event) => Number(event.id))).toEqual(seqs.filter((seq) => seq >= error.oldestSeq));
  });

  it('answers a websocket subscribe with an after older than the log keeps with a cursor_expired frame and the oldest seq kept, and sends no event', async () => {
    const { conversationId, turnId, seqs } = await finishedTurns(25);
    const lastSeq = seqs.at(-1)!;
    const client = await TestWsClient.connect(stack.url, { apiKey });
    try {
      client.send({ type: 'subscribe', conversationId, after: 2 });
      const error = await client.waitFor((frame) => frame.type === 'error');
      expect(error).toEqual({ type: 'error', code: 'cursor_expired', message: expect.any(String), conversationId, oldestSeq: expect.any(Number) });
      expect(error.oldestSeq).toBeGreaterThan(3);
      expect(error.oldestSeq).toBeLessThanOrEqual(lastSeq - 9);
      // The same oldest seq as an SSE reader is told: one log, one answer.
      expect(JSON.parse((await resume(turnId, '2'))[0]!.data!).oldestSeq).toBe(error.oldestSeq);

      // From just before the oldest kept event, the rest is replayed: and nothing came before it.
      client.send({ type: 'subscribe', conversationId, after: error.oldestSeq - 1 });
      await client.waitFor((frame) => frame.type === 'event' && frame.event.seq === lastSeq);
      expect(client.frames.slice(0, 2).map((frame) => frame.type)).toEqual(['error', 'subscribed']);
      const replayed = client.events().map((event) => event.seq);
      expect(replayed[0]).toBe(error.oldestSeq);
      expect(replayed).toEqual(Array.from({ length: lastSeq - error.oldestSeq + 1 }, (_, index) => error.oldestSeq + index));
    } finally {
      client.close();
    }
  });

  it('answers the same while the turn is still running (the live path)', async () => {
    const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
    const turnId = (await api.post(`/v1/conversations/${conversationId}/turns`, { content: scripted({ tokens: 400, tokenDelayMs: 20 }) })).body.turnId as string;
    const events = await resume(turnId, '100000');
    expect(events.map((event) => event.event)).toEqual(['error']);
    expect(JSON.parse(events[0]!.data!)).toMatchObject({ code: 'bad_cursor' });
    await api.post(`/v1/turns/${turnId}/cancel`);
  });
});
