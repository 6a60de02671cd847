import { apiClient } from '../support/http';
import { scripted } from '../support/scripted';
import { startTestStack, type TestStack } from '../support/stack';
import { TestWsClient } from '../support/ws-client';

describe('the turn pipeline', () => {
  let stack: TestStack;
  let alice: ReturnType<typeof apiClient>;
  let aliceKey: string;

  beforeAll(async () => {
    stack = await startTestStack();
    aliceKey = (await stack.createUser('alice')).apiKey;
    alice = apiClient(stack.url, aliceKey);
  });
  afterAll(() => stack.close());

  async function newConversation(body: Record<string, unknown> = {}): Promise<string> {
    const created = await alice.post('/v1/conversations', body);
    expect(created.status).toBe(201);
    return created.body.id;
  }

  it('streams text to a websocket client and stores the same text', async () => {
    const conversationId = await newConversation({ title: 't', system: 'be brief' });
    const client = await TestWsClient.subscribed(stack.url, { apiKey: aliceKey }, conversationId);

    const text = 'The quick brown fox jumps over the lazy dog, twice: the quick brown fox.';
    const posted = await alice.post(`/v1/conversations/${conversationId}/turns`, { content: `hi ${scripted({ text })}` });
    expect(posted.status).toBe(202);
    expect(posted.body.status).toBe('queued');

    const events = await client.waitForTurnEnd(posted.body.turnId);
    const assembled = events
      .filter((e) => e.type === 'text-delta')
      .map((e) => e.delta)
      .join('');
    expect(assembled).toBe(text);
    expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
    const types = events.map((e) => e.type).filter((t) => t !== 'text-delta');
    expect(types).toEqual(['turn-start', 'step-start', 'step-finish', 'turn-finish']);
    expect(events.at(-1).usage.completionTokens).toBeGreaterThan(0);

    const conversation = await alice.get(`/v1/conversations/${conversationId}`);
    expect(conversation.body.messages.map((m: any) => m.role)).toEqual(['user', 'assistant']);
    expect(conversation.body.messages[1].content).toBe(assembled);
    expect(conversation.body.lastSeq).toBe(events.at(-1).seq);

    const turn = await alice.get(`/v1/turns/${posted.body.turnId}`);
    expect(turn.body).toMatchObject({ status: 'completed', attempt: 1, step: 1, finishReason: 'stop' });
    expect(turn.body.steps).toHaveLength(1);

    // The provider got the system prompt and the user message, as OpenAI expects them.
    const request = stack.scripted.requests.at(-1)!.body as any;
    expect(request.messages[0]).toEqual({ role: 'system', content: 'be brief' });
    expect(request.messages.at(-1).role).toBe('user');
    client.close();
  });

  it('gives a client that reconnects with `after` every event exactly once', async () => {
    const conversationId = await newConversation();
    const first = await TestWsClient.subscribed(stack.url, { apiKey: aliceKey }, conversationId);
    const posted = await alice.post(`/v1/conversations/${conversationId}/turns`, {
      content: scripted({ tokens: 200, tokenDelayMs: 2 }),
    });
    await first.waitFor((frame) => frame.type === 'event' && frame.event.type === 'text-delta' && frame.event.seq >= 20);
    first.socket.terminate();
    await first.whenClosed();
    const seen = first.events();
    const lastSeen = seen.at(-1).seq;

    const second = await TestWsClient.connect(stack.url, { apiKey: aliceKey });
    second.send({ type: 'subscribe', conversationId, after: lastSeen });
    const all = [...seen, ...(await second.waitForTurnEnd(posted.body.turnId))];
    expect(all.map((e) => e.seq)).toEqual(all.map((_, i) => i + 1));
    const text = all
      .filter((e) => e.type === 'text-delta')
      .map((e) => e.delta)
      .join('');
    const stored = await alice.get(`/v1/conversations/${conversationId}`);
    expect(stored.body.messages[1].content).toBe(text);
    second.close();
  });

  it('returns the first turn for a repeated idempotency key, also when both arrive at once', async () => {
    const conversationId = await newConversation();
    const body = { content: 'same request', idempotencyKey: 'key-1' };
    const [a, b] = await Promise.all([alice.post(`/v1/conversations/${conversationId}/turns`, body), alice.post(`/v1/conversations/${conversationId}/turns`, body)]);
    expect([a.status, b.status].sort()).toEqual([200, 202]);
    expect(a.body.turnId).toBe(b.body.turnId);
    const again = await alice.post(`/v1/conversations/${conversationId}/turns`, body);
    expect(again.status).toBe(200);
    expect(again.body.turnId).toBe(a.body.turnId);

    const conflict = await alice.post(`/v1/conversations/${conversationId}/turns`, { content: 'other', idempotencyKey: 'key-1' });
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe('idempotency_conflict');
  });

  it('rejects a second turn while one runs, and runs an enqueued one after it', async () => {
    const conversationId = await newConversation();
    const client = await TestWsClient.subscribed(stack.url, { apiKey: aliceKey }, conversationId);
    const first = await alice.post(`/v1/conversations/${conversationId}/turns`, { content: scripted({ tokens: 30, tokenDelayMs: 5 }) });
    await client.waitFor((frame) => frame.type === 'event' && frame.event.type === 'turn-start');

    const rejected = await alice.post(`/v1/conversations/${conversationId}/turns`, { content: 'second' });
    expect(rejected.status).toBe(409);
    expect(rejected.body.error.code).toBe('conversation_busy');

    const queued = await alice.post(`/v1/conversations/${conversationId}/turns`, { content: 'third', onBusy: 'enqueue' });
    expect(queued.status).toBe(202);
    const events = await client.waitForTurnEnd(queued.body.turnId);
    const finishOfFirst = events.findIndex((e) => e.turnId === first.body.turnId && e.type === 'turn-finish');
    const startOfQueued = events.findIndex((e) => e.turnId === queued.body.turnId && e.type === 'turn-start');
    expect(finishOfFirst).toBeGreaterThan(-1);
    expect(startOfQueued).toBeGreaterThan(finishOfFirst);

    const stored = await alice.get(`/v1/conversations/${conversationId}`);
    expect(stored.body.messages.map((m: any) => [m.role, m.turnId])).toEqual([
      ['user', first.body.turnId],
      ['assistant', first.body.turnId],
      ['user', queued.body.turnId],
      ['assistant', queued.body.turnId],
    ]);
    client.close();
  });

  it('ends a turn the provider refuses with a readable turn-error', async () => {
    const conversationId = await newConversation();
    const client = await TestWsClient.subscribed(stack.url, { apiKey: aliceKey }, conversationId);
    const posted = await alice.post(`/v1/conversations/${conversationId}/turns`, {
      content: scripted({ error: { status: 400, message: 'messages: invalid role' } }),
    });
    const events = await client.waitForTurnEnd(posted.body.turnId);
    const error = events.at(-1);
    expect(error.type).toBe('turn-error');
    expect(error.error.code).toBe('provider_error');
    expect(error.error.message).toContain('messages: invalid role');
    // The provider that refused is named (with LLM_*, provider `default`).
    expect(error.error.message).toContain('provider "default"');
    const turn = await alice.get(`/v1/turns/${posted.body.turnId}`);
    expect(turn.body.status).toBe('failed');
    expect(turn.body.error.code).toBe('provider_error');
    client.close();
  });

  it('streams a turn as server-sent events and resumes from Last-Event-ID', async () => {
    const conversationId = await newConversation();
    const posted = await alice.post(`/v1/conversations/${conversationId}/turns`, { content: scripted({ text: 'one two three four' }) });
    const response = await fetch(`${stack.url}/v1/turns/${posted.body.turnId}/events`, { headers: { authorization: `Bearer ${aliceKey}` } });
    expect(response.headers.get('content-type')).toContain('text/event-stream');
    const body = await response.text();
    const ids = [...body.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
    expect(ids).toEqual(ids.map((_, i) => i + 1));
    expect(body).toContain('event: turn-finish');

    const resumed = await fetch(`${stack.url}/v1/turns/${posted.body.turnId}/events`, {
      headers: { authorization: `Bearer ${aliceKey}`, 'last-event-id': String(ids[2]) },
    });
    const resumedIds = [...(await resumed.text()).matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
    expect(resumedIds).toEqual(ids.slice(3));
  });

  it('cancels a running turn', async () => {
    const conversationId = await newConversation();
    const client = await TestWsClient.subscribed(stack.url, { apiKey: aliceKey }, conversationId);
    const posted = await alice.post(`/v1/conversations/${conversationId}/turns`, { content: scripted({ tokens: 2000, tokenDelayMs: 5 }) });
    await client.waitFor((frame) => frame.type === 'event' && frame.event.type === 'text-delta');
    const cancelled = await alice.post(`/v1/turns/${posted.body.turnId}/cancel`);
    expect(cancelled.status).toBe(200);
    expect(cancelled.body.status).toBe('cancelled');
    const events = await client.waitForTurnEnd(posted.body.turnId);
    expect(events.at(-1).type).toBe('turn-cancelled');
    // The conversation takes a new turn at once; the cancelled one left what it had streamed, marked incomplete.
    const shown = events
      .filter((event: any) => event.type === 'text-delta')
      .map((event: any) => event.delta)
      .join('');
    const next = await alice.post(`/v1/conversations/${conversationId}/turns`, { content: scripted({ text: 'after cancel' }) });
    expect(next.status).toBe(202);
    await client.waitForTurnEnd(next.body.turnId);
    const stored = await alice.get(`/v1/conversations/${conversationId}`);
    const assistants = stored.body.messages.filter((m: any) => m.role === 'assistant');
    expect(assistants.map((m: any) => [m.content, m.incomplete])).toEqual([
      [shown, true],
      ['after cancel', undefined],
    ]);
    client.close();
  });
});
