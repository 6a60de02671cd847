import { randomBytes } from 'node:crypto';
import { apiClient } from '../support/http';
import { followBatchEvents } from '../support/batch-events';
import { checkInvariants } from '../support/invariants';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server';
import { markedScripted, scripted } from '../support/scripted';
import { startTestStack, type TestStack } from '../support/stack';
import { startToolHttpServer, writeToolsDir, type ToolHttpServer } from '../support/tool-servers';
import { TestWsClient } from '../support/ws-client';

const LONG_TEXT = Array.from({ length: 120 }, (_, i) => `word${i}`).join(' ');

/**
 * docs/RELIABILITY.md case 7: Redis comes back EMPTY (a restart without its data, a failover to a
 * replica that had nothing). PostgreSQL knows which turns are unfinished: the reconciler
 * re-enqueues each of them, each completes once, and the conversation's seqs continue from
 * PostgreSQL's `last_seq`.
 */
describe('Redis comes back empty', () => {
  let redis: PrivateRedis;
  let tools: ToolHttpServer;
  let stack: TestStack;

  beforeAll(async () => {
    redis = await startPrivateRedis();
    tools = await startToolHttpServer();
    tools.route('/slow', { body: { ok: true }, delayMs: 1500 });
    const toolsDir = await writeToolsDir({
      'slow.json': { name: 'slow', description: 'takes a while', url: `${tools.url}/slow`, fields: [{ name: 'n', type: 'integer' }] },
    });
    stack = await startTestStack({
      env: { REDIS_URL: redis.url, TOOLS_DIR: toolsDir, LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '500', RECONCILE_INTERVAL_MS: '500' },
    });
  });
  afterAll(async () => {
    await stack.close();
    await tools.close();
    await redis.close();
  });

  it('re-enqueues every unfinished turn once; each completes once and seqs continue from last_seq', async () => {
    const { apiKey } = await stack.createUser('loss');
    const api = apiClient(stack.url, apiKey);
    const newConversation = async () => (await api.post('/v1/conversations', {})).body.id as string;
    /** Posts a turn whose user message carries a marker, to count its provider requests. */
    const post = async (conversationId: string, scenario: unknown, extra: Record<string, unknown> = {}) => {
      const marker = `m-${randomBytes(6).toString('hex')}`;
      const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content: markedScripted(scenario, marker), ...extra });
      expect(posted.status).toBe(202);
      return { turnId: posted.body.turnId as string, marker };
    };
    const providerRequests = (marker: string) =>
      stack.scripted.requests.filter((request) => {
        const users = (request.body as { messages: { role: string; content: unknown }[] }).messages.filter((message) => message.role === 'user');
        return JSON.stringify(users.at(-1)?.content ?? '').includes(marker);
      }).length;

    // A finished turn first, so that the conversation's last_seq in PostgreSQL is not 0.
    const streaming = await newConversation();
    const watcher = await TestWsClient.subscribed(stack.url, { apiKey }, streaming);
    const finished = await post(streaming, { text: 'first answer' });
    await watcher.waitForTurnEnd(finished.turnId);
    const lastSeqBefore = (await api.get(`/v1/conversations/${streaming}`)).body.lastSeq as number;
    expect(lastSeqBefore).toBe(watcher.events().at(-1).seq);

    // At the moment Redis is lost: a turn mid-stream, one queued behind it, and a turn of
    // another conversation whose tool is running.
    const midStream = await post(streaming, { text: LONG_TEXT, tokenDelayMs: 15 });
    const queuedBehind = await post(streaming, { text: 'after the loss' }, { onBusy: 'enqueue' });
    const toolConversation = await newConversation();
    const inTools = await post(toolConversation, { steps: [{ toolCalls: [{ name: 'slow', arguments: { n: 1 } }] }, { text: 'tool done' }] });
    await watcher.waitFor((frame) => frame.type === 'event' && frame.event.turnId === midStream.turnId && frame.event.type === 'text-delta');
    await tools.waitForRequests(1);

    await redis.restartEmpty();

    // A subscriber that lived through the loss is told its seqs no longer hold, rather than
    // being handed the new log's events as if they followed the old ones.
    const broken = await watcher.waitFor((frame) => frame.type === 'error');
    expect(broken).toMatchObject({ conversationId: streaming });

    const afterLoss = await TestWsClient.connect(stack.url, { apiKey });
    afterLoss.send({ type: 'subscribe', conversationId: streaming });
    afterLoss.send({ type: 'subscribe', conversationId: toolConversation });
    for (const turn of [midStream, queuedBehind, inTools]) await afterLoss.waitForTurnEnd(turn.turnId);

    const statuses = await checkInvariants(stack.resources.db, {
      turnIds: [finished, midStream, queuedBehind, inTools].map((turn) => turn.turnId),
      toolExecutions: tools.executions(),
    });
    expect(Object.values(statuses)).toEqual(['completed', 'completed', 'completed', 'completed']);
    const stored = (await api.get(`/v1/conversations/${streaming}`)).body;
    expect(stored.messages.filter((message: any) => message.role === 'assistant').map((message: any) => message.content)).toEqual(['first answer', LONG_TEXT, 'after the loss']);
    expect((await api.get(`/v1/conversations/${toolConversation}`)).body.messages.at(-1).content).toBe('tool done');

    // Each turn ran once more at most: those that had not reached the model yet, exactly once.
    expect(providerRequests(queuedBehind.marker)).toBe(1);
    expect(providerRequests(inTools.marker)).toBe(2);
    expect(providerRequests(midStream.marker)).toBeLessThanOrEqual(2);

    // The new log numbers events on from PostgreSQL's last_seq, one by one, not from 1.
    const { events } = await stack.resources.eventLog.read(streaming, 0);
    expect(events[0]!.seq).toBe(lastSeqBefore + 1);
    expect(events.map((event) => event.seq)).toEqual(events.map((_, i) => lastSeqBefore + 1 + i));
    expect(stored.lastSeq).toBe(events.at(-1)!.seq);
    watcher.close();
    afterLoss.close();
  }, 30_000);

  it('finishes a batch that was running when Redis was lost: every item once, one turn each', async () => {
    const { apiKey } = await stack.createUser('batch-loss');
    const api = apiClient(stack.url, apiKey);
    const items = Array.from({ length: 30 }, (_, i) => ({
      customId: `b${i}`,
      messages: [
        i % 10 === 0
          ? scripted({ steps: [{ toolCalls: [{ name: 'slow', arguments: { n: i } }] }, { text: `tool ${i}` }] })
          : scripted({ text: `answer ${i}`, tokens: 20, tokenDelayMs: 10 }),
      ],
    }));
    const batch = (await api.post('/v1/batches', { items, concurrency: 6 })).body;
    const before = await followBatchEvents(stack.url, apiKey, batch.id);
    await before.waitFor((frame) => frame.type === 'batch-progress' && frame.counts.succeeded >= 3 && frame.counts.running > 0).finally(() => before.close());

    await redis.restartEmpty();

    const after = await followBatchEvents(stack.url, apiKey, batch.id);
    const end = await after.finished(90_000).finally(() => after.close());
    expect(end).toMatchObject({ status: 'completed', counts: { total: 30, succeeded: 30, failed: 0, cancelled: 0, running: 0, queued: 0 } });

    const results = (await (await fetch(`${stack.url}/v1/batches/${batch.id}/results`, { headers: { authorization: `Bearer ${apiKey}` } })).text())
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(results.map((line) => [line.customId, line.text])).toEqual(items.map((_, i) => [`b${i}`, i % 10 === 0 ? `tool ${i}` : `answer ${i}`]));
    const { rows: turns } = await stack.resources.db.query<{ id: string; conversation_id: string }>(
      'SELECT t.id, t.conversation_id FROM turns t JOIN batch_items b ON b.conversation_id = t.conversation_id WHERE b.batch_id = $1',
      [batch.id],
    );
    expect(new Set(turns.map((turn) => turn.conversation_id)).size).toBe(30);
    expect(turns).toHaveLength(30);
    const statuses = await checkInvariants(stack.resources.db, { turnIds: turns.map((turn) => turn.id), toolExecutions: tools.executions() });
    expect(new Set(Object.values(statuses))).toEqual(new Set(['completed']));
  }, 120_000);
});
