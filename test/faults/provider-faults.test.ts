import { poll } from '../support/poll';
import { randomBytes } from 'node:crypto';
import { QueueEvents } from 'bullmq';
import { TURN_QUEUE, turnJobId } from '../../src/queue/turn-queue';
import { connectRedis } from '../../src/redis/redis-connection';
import { apiClient } from '../support/http';
import { visibleStepTexts } from '../support/client-view';
import { checkInvariants } from '../support/invariants';
import { markedScripted } from '../support/scripted';
import { startTestStack, type TestStack } from '../support/stack';
import { TestWsClient } from '../support/ws-client';

/**
 * docs/RELIABILITY.md cases 11–15: a provider that refuses, fails, cuts or stalls. Retries are
 * counted at the scripted model itself (the SDK must never retry on its own), the client's
 * view is rebuilt from the websocket events, and every test ends with the three invariants.
 */

const MAX_RETRIES = 2;
const RETRY_BASE_MS = 20;
// The scripted model, the worker and the API share this process's one thread: a pause of it (GC,
// a loaded machine) while a healthy stream is open must not read as the provider going silent.
// The three stalls below each cost this much, and prove nothing more with a shorter one.
const IDLE_TIMEOUT_MS = 2_000;

interface DelayedEvent {
  jobId: string;
  /** When the job is due, in ms since the epoch. */
  delay: number;
}

async function listenForDelayedJobs(stack: TestStack) {
  // QueueEvents does not close a connection it was given: this one is closed here.
  const connection = connectRedis(stack.resources.redisTarget, 'blocking');
  const queueEvents = new QueueEvents(TURN_QUEUE, { connection, prefix: stack.resources.queuePrefix });
  await queueEvents.waitUntilReady();
  const seen: DelayedEvent[] = [];
  const waiters = new Set<(args: DelayedEvent) => void>();
  queueEvents.on('delayed', (args) => {
    seen.push(args);
    for (const waiter of waiters) waiter(args);
  });
  return {
    /** The first `delayed` event (past or future) matching `predicate`. */
    waitFor(predicate: (args: DelayedEvent) => boolean, timeoutMs = 10_000): Promise<DelayedEvent> {
      const past = seen.find(predicate);
      if (past) return Promise.resolve(past);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`no matching job was delayed within ${timeoutMs} ms`));
        }, timeoutMs);
        const waiter = (args: DelayedEvent) => {
          if (!predicate(args)) return;
          clearTimeout(timer);
          waiters.delete(waiter);
          resolve(args);
        };
        waiters.add(waiter);
      });
    },
    async close() {
      await queueEvents.close();
      connection.disconnect();
    },
  };
}

interface TurnRun {
  turnId: string;
  conversationId: string;
  marker: string;
  client: TestWsClient;
}

describe('provider faults', () => {
  let stack: TestStack;
  let api: ReturnType<typeof apiClient>;
  let apiKey: string;
  const clients: TestWsClient[] = [];
  /** BullMQ's `delayed` events of the turn queue: a job moved there says when it is due. */
  let delayedEvents: Awaited<ReturnType<typeof listenForDelayedJobs>>;

  beforeAll(async () => {
    stack = await startTestStack({
      workers: 1,
      env: {
        // One job at a time: a worker that slept through a Retry-After would hold it.
        WORKER_CONCURRENCY: '1',
        PROVIDER_MAX_RETRIES: String(MAX_RETRIES),
        PROVIDER_RETRY_BASE_MS: String(RETRY_BASE_MS),
        PROVIDER_RETRY_MAX_MS: '1000',
        PROVIDER_IDLE_TIMEOUT_MS: String(IDLE_TIMEOUT_MS),
        // Below the backoff: the retries' waits are the backoff's, as these tests check.
        PROVIDER_COOLDOWN_BASE_MS: String(RETRY_BASE_MS / 2),
      },
    });
    apiKey = (await stack.createUser('provider-faults')).apiKey;
    api = apiClient(stack.url, apiKey);
    delayedEvents = await listenForDelayedJobs(stack);
  });

  // A refusal cools the provider down for every turn after it: each test starts with it healthy.
  const healTargets = () => stack.resources.redis.del(`${stack.config.REDIS_PREFIX}:model-targets`);
  afterEach(() => healTargets());

  afterAll(async () => {
    for (const client of clients) client.close();
    await delayedEvents.close();
    await stack.close();
  });

  /** Subscribes a client to a new conversation, then posts a turn whose user message scripts the model. */
  async function startTurn(scenario: unknown): Promise<TurnRun> {
    const created = await api.post('/v1/conversations', {});
    expect(created.status).toBe(201);
    const conversationId = created.body.id as string;
    const client = await TestWsClient.subscribed(stack.url, { apiKey }, conversationId);
    clients.push(client);
    const marker = `run-${randomBytes(6).toString('hex')}`;
    const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content: markedScripted(scenario, marker) });
    expect(posted.status).toBe(202);
    return { turnId: posted.body.turnId, conversationId, marker, client };
  }

  async function runTurn(scenario: unknown): Promise<TurnRun & { events: any[] }> {
    const run = await startTurn(scenario);
    const events = await run.client.waitForTurnEnd(run.turnId);
    return { ...run, events };
  }

  /** The chat-completion requests that reached the scripted model for one turn (its user message is the last), oldest first. */
  const requestsOf = (marker: string) =>
    stack.scripted.requests.filter((request) => {
      const messages = (request.body as { messages: { role: string; content: unknown }[] }).messages;
      return JSON.stringify(messages.filter((message) => message.role === 'user').at(-1)?.content).includes(marker);
    });

  const typesOf = (events: any[]) => events.map((event) => event.type).filter((type) => type !== 'text-delta');
  const ofType = (events: any[], type: string) => events.filter((event) => event.type === type);

  async function assistantMessages(conversationId: string): Promise<{ step: number; content: unknown }[]> {
    const { rows } = await stack.resources.db.query<{ step: number; content: unknown }>(
      `SELECT step, content FROM messages WHERE conversation_id = $1 AND role = 'assistant' ORDER BY id`,
      [conversationId],
    );
    return rows;
  }

  /** Waits until a PostgreSQL backend waits on a lock that `pid` holds (nothing announces that). */
  async function waitUntilBlockedBy(pid: number, timeoutMs = 5_000): Promise<void> {
    await poll(
      `nothing waited on backend ${pid} within ${timeoutMs} ms`,
      async () => {
        const { rows } = await stack.resources.db.query<{ count: string | number }>('SELECT count(*) AS count FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [pid]);
        return Number(rows[0]!.count) > 0;
      },
      timeoutMs,
      10,
    );
  }

  async function expectInvariants(expected: Record<string, string>): Promise<void> {
    const statuses = await checkInvariants(stack.resources.db, { turnIds: Object.keys(expected), toolExecutions: [] });
    expect(statuses).toEqual(expected);
  }

  const TEXT = 'Provider streams break in the middle, and the retried answer must still arrive whole, once.';

  describe('429 with Retry-After (case 11)', () => {
    it('waits out a Retry-After past 60 s by delaying the job: no worker is held, the turn shows queued, and completes once promoted', async () => {
      const limited = await startTurn({
        attempts: [{ error: { status: 429, message: 'slow down', retryAfterSeconds: 61 } }, { text: 'after the wait' }],
      });
      const jobId = turnJobId(limited.turnId);
      const delayed = await delayedEvents.waitFor((args) => args.jobId === jobId);

      // The job waits in Redis, not in a worker, due no earlier than the Retry-After says.
      const [rateLimited] = requestsOf(limited.marker);
      expect(delayed.delay).toBeGreaterThanOrEqual(rateLimited!.receivedAt + 61_000);
      const job = await stack.resources.turnQueue.getJob(jobId);
      // (Not `job.delay`: BullMQ stores it relative to its own clock reading inside the move, a
      // millisecond or so after the worker's, so it can read 60,999 for a due time 61 s away.)
      expect(await job!.getState()).toBe('delayed');
      const retry = await limited.client.waitFor((frame) => frame.type === 'event' && frame.event.type === 'provider-retry');
      expect(retry.event).toMatchObject({ turnId: limited.turnId, attempt: 1 });
      expect(retry.event.retryInMs).toBeGreaterThanOrEqual(61_000);
      expect(retry.event.reason).toContain('429');

      const waiting = await api.get(`/v1/turns/${limited.turnId}`);
      expect(waiting.body).toMatchObject({ status: 'queued', attempt: 1, providerRetries: 1, lastError: { code: 'rate_limited' } });
      expect(waiting.body.lastError.message).toContain('slow down');

      // With WORKER_CONCURRENCY=1, another conversation's turn can only run if nothing holds the worker
      // (and if the provider is not cooling down from the 429, which every other turn would wait out too).
      await healTargets();
      const other = await runTurn({ text: 'meanwhile' });
      expect(other.events.at(-1)).toMatchObject({ type: 'turn-finish' });
      expect(await job!.getState()).toBe('delayed');
      expect(requestsOf(limited.marker)).toHaveLength(1);

      // As if the 61 s had passed: the provider's cooldown too.
      await healTargets();
      await job!.promote();
      const events = (await limited.client.waitForTurnEnd(limited.turnId)).filter((event) => event.turnId === limited.turnId);
      expect(typesOf(events)).toEqual(['turn-start', 'step-start', 'provider-retry', 'turn-start', 'step-start', 'step-finish', 'turn-finish']);
      expect(ofType(events, 'turn-start').map((event) => event.attempt)).toEqual([1, 2]);
      expect(visibleStepTexts(events).get(1)).toBe('after the wait');
      expect(requestsOf(limited.marker)).toHaveLength(2);
      const done = await api.get(`/v1/turns/${limited.turnId}`);
      expect(done.body).toMatchObject({ status: 'completed', attempt: 2, providerRetries: 1, lastError: { code: 'rate_limited' } });
      expect(await assistantMessages(limited.conversationId)).toEqual([{ step: 1, content: 'after the wait' }]);
      await expectInvariants({ [limited.turnId]: 'completed', [other.turnId]: 'completed' });
    });
  });

  describe('the turn while it waits out a retry', () => {
    it('is queued, in PostgreSQL, before provider-retry announces it', async () => {
      const run = await startTurn({ attempts: [{ stallAfterTokens: 0 }, { text: 'second try' }] });
      await stack.scripted.waitForRequest((request) => requestsOf(run.marker).includes(request));
      // Hold the turn's row: the worker's commit of the retry (status back to `queued`) waits
      // on it once the idle timeout has failed the stream, IDLE_TIMEOUT_MS from now.
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      const holderPid = new Promise<number>((resolve, reject) => {
        const holding = stack.resources.db.transaction(async (tx) => {
          await tx.query('SELECT id FROM turns WHERE id = $1 FOR UPDATE', [run.turnId]);
          const { rows } = await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid');
          resolve(rows[0]!.pid);
          await released;
        });
        holding.catch(reject);
      });
      try {
        await waitUntilBlockedBy(await holderPid, IDLE_TIMEOUT_MS + 10_000);
        // Read on the connection the worker appends on, so anything it emitted before its commit is in.
        const logged = (await stack.resources.eventLog.read(run.conversationId, 0)).events.map((event) => JSON.parse(event.json).type);
        expect(logged).toEqual(['turn-start', 'step-start']);
        expect((await api.get(`/v1/turns/${run.turnId}`)).body).toMatchObject({ status: 'running', providerRetries: 0 });
      } finally {
        release();
      }
      const events = await run.client.waitForTurnEnd(run.turnId);
      expect(typesOf(events)).toEqual(['turn-start', 'step-start', 'provider-retry', 'turn-start', 'step-start', 'step-finish', 'turn-finish']);
      await expectInvariants({ [run.turnId]: 'completed' });
    });
  });

  describe('5xx and refusals before the first byte (case 12)', () => {
    it('retries 5xx with a bounded, growing backoff, then fails with retries_exhausted', async () => {
      // A fourth try would succeed: only the bound stops the turn from reaching it.
      const run = await runTurn({
        attempts: [{ error: { status: 500 } }, { error: { status: 502 } }, { error: { status: 503 } }, { text: 'too late' }],
      });
      const requests = requestsOf(run.marker);
      expect(requests).toHaveLength(MAX_RETRIES + 1);

      const retries = ofType(run.events, 'provider-retry');
      expect(retries.map((event) => event.attempt)).toEqual([1, 2]);
      retries.forEach((event, index) => {
        // Jittered over the upper half of base × 2^n.
        const ceiling = RETRY_BASE_MS * 2 ** index;
        expect(event.retryInMs).toBeGreaterThanOrEqual(ceiling / 2);
        expect(event.retryInMs).toBeLessThanOrEqual(ceiling);
        // The next try did not come before the backoff it announced.
        expect(requests[index + 1]!.receivedAt - requests[index]!.receivedAt).toBeGreaterThanOrEqual(event.retryInMs);
      });
      expect(ofType(run.events, 'attempt-discarded')).toEqual([]);
      const error = run.events.at(-1);
      expect(error).toMatchObject({ type: 'turn-error', error: { code: 'retries_exhausted' } });
      expect(error.error.message).toContain('503');

      const turn = await api.get(`/v1/turns/${run.turnId}`);
      expect(turn.body).toMatchObject({
        status: 'failed',
        attempt: MAX_RETRIES + 1,
        providerRetries: MAX_RETRIES,
        lastError: { code: 'server' },
        error: { code: 'retries_exhausted' },
      });
      expect(await assistantMessages(run.conversationId)).toEqual([]);
      await expectInvariants({ [run.turnId]: 'failed' });
    });

    it('gets past a 5xx that clears up on the retry', async () => {
      const run = await runTurn({ attempts: [{ error: { status: 503 } }, { text: TEXT }] });
      expect(run.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
      expect(requestsOf(run.marker)).toHaveLength(2);
      expect(visibleStepTexts(run.events).get(1)).toBe(TEXT);
      expect(await assistantMessages(run.conversationId)).toEqual([{ step: 1, content: TEXT }]);
      const turn = await api.get(`/v1/turns/${run.turnId}`);
      expect(turn.body).toMatchObject({ status: 'completed', attempt: 2, providerRetries: 1, lastError: { code: 'server' } });
      await expectInvariants({ [run.turnId]: 'completed' });
    });

    it.each([
      ['400', { status: 400, message: 'messages: invalid role' }],
      ['401', { status: 401, message: 'Incorrect API key provided' }],
      ['403', { status: 403, message: 'this project may not use this model' }],
      ['404', { status: 404, message: 'The model `nope` does not exist' }],
      ['422', { status: 422, message: 'unprocessable' }],
      [
        'a context-length error',
        {
          status: 400,
          type: 'invalid_request_error',
          code: 'context_length_exceeded',
          message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 9001 tokens.",
        },
      ],
    ])('does not retry %s: one request, then turn-error naming the provider', async (_name, error) => {
      // Were it retried, the second try would succeed.
      const run = await runTurn({ attempts: [{ error }, { text: 'should never be asked' }] });
      expect(requestsOf(run.marker)).toHaveLength(1);
      expect(typesOf(run.events)).toEqual(['turn-start', 'step-start', 'turn-error']);
      const turnError = run.events.at(-1);
      // Too long for the only target (no larger window to go to): the turn fails with that code.
      const code = 'code' in error ? 'context_length_exceeded' : 'provider_error';
      expect(turnError.error.code).toBe(code);
      expect(turnError.error.message).toContain(String(error.status));
      expect(turnError.error.message).toContain(error.message);
      if (code === 'provider_error') expect(turnError.error.message).toContain('provider "default"');

      const turn = await api.get(`/v1/turns/${run.turnId}`);
      expect(turn.body).toMatchObject({ status: 'failed', attempt: 1, providerRetries: 0, lastError: null, error: { code } });
      await expectInvariants({ [run.turnId]: 'failed' });
    });
  });

  describe('a connection dropped after some tokens (case 13)', () => {
    it('retries as a new attempt, discards the broken one, and stores the full text once', async () => {
      const run = await runTurn({
        attempts: [
          { text: TEXT, cutAfterTokens: 5, tokenDelayMs: 2 },
          { text: TEXT, tokenDelayMs: 1 },
        ],
      });
      expect(requestsOf(run.marker)).toHaveLength(2);
      expect(typesOf(run.events)).toEqual(['turn-start', 'step-start', 'attempt-discarded', 'provider-retry', 'turn-start', 'step-start', 'step-finish', 'turn-finish']);
      // The first attempt's tokens came before the discard; the second attempt's all after.
      const discardAt = run.events.findIndex((event) => event.type === 'attempt-discarded');
      const deltas = run.events.map((event, index) => ({ event, index })).filter(({ event }) => event.type === 'text-delta');
      const broken = deltas
        .filter(({ index }) => index < discardAt)
        .map(({ event }) => event.delta)
        .join('');
      expect(broken.length).toBeGreaterThan(0);
      expect(TEXT.startsWith(broken)).toBe(true);
      expect(broken).not.toBe(TEXT);
      expect(run.events[discardAt]).toMatchObject({ attempt: 1, step: 1 });
      expect(ofType(run.events, 'turn-start').map((event) => event.attempt)).toEqual([1, 2]);
      expect(run.events.map((event) => event.seq)).toEqual(run.events.map((_, index) => run.events[0].seq + index));

      expect(visibleStepTexts(run.events)).toEqual(new Map([[1, TEXT]]));
      expect(await assistantMessages(run.conversationId)).toEqual([{ step: 1, content: TEXT }]);
      const turn = await api.get(`/v1/turns/${run.turnId}`);
      expect(turn.body).toMatchObject({ status: 'completed', attempt: 2, providerRetries: 1, partialToolCalls: [] });
      expect(['connection', 'truncated']).toContain(turn.body.lastError.code);
      await expectInvariants({ [run.turnId]: 'completed' });
    });

    it('retries only the broken step: a committed step and its tool call are not repeated', async () => {
      const run = await runTurn({
        steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }] }, { attempts: [{ text: TEXT, cutAfterTokens: 4 }, { text: TEXT }] }],
      });
      expect(run.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
      const requests = requestsOf(run.marker).map((request) => (request.body as { messages: { role: string }[] }).messages);
      // Step 1 once; step 2 (its history ending with the tool result) twice.
      expect(requests.map((messages) => messages.at(-1)!.role)).toEqual(['user', 'tool', 'tool']);
      expect(requests[2]).toEqual(requests[1]);
      expect(ofType(run.events, 'step-finish').map((event) => event.step)).toEqual([1, 2]);
      expect(ofType(run.events, 'tool-result')).toHaveLength(1);
      expect(ofType(run.events, 'attempt-discarded')).toEqual([expect.objectContaining({ attempt: 1, step: 2 })]);

      const stored = await assistantMessages(run.conversationId);
      expect(stored.map((message) => message.step)).toEqual([1, 2]);
      expect(stored[1]!.content).toBe(TEXT);
      expect(visibleStepTexts(run.events).get(2)).toBe(TEXT);
      const turn = await api.get(`/v1/turns/${run.turnId}`);
      expect(turn.body.toolCalls).toEqual([expect.objectContaining({ toolName: 'calculator', status: 'succeeded', attempts: 1, result: { expression: '6*7', result: 42 } })]);
      expect(turn.body).toMatchObject({ status: 'completed', step: 2, attempt: 2, providerRetries: 1 });
      await expectInvariants({ [run.turnId]: 'completed' });
    });

    it('drops a tool call cut mid-arguments: the retried step runs the call once, with the whole arguments', async () => {
      const call = { name: 'calculator', arguments: { expression: '6*7' } };
      const run = await runTurn({
        steps: [{ attempts: [{ toolCalls: [call], cutAfterTokens: 2 }, { toolCalls: [call] }] }, { text: 'It is 42.' }],
      });
      expect(run.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
      expect(requestsOf(run.marker)).toHaveLength(3);
      const discardAt = run.events.findIndex((event) => event.type === 'attempt-discarded');
      expect(run.events[discardAt]).toMatchObject({ attempt: 1, step: 1 });
      // The broken attempt had begun the call; only the new attempt's fragments make it whole.
      expect(ofType(run.events.slice(0, discardAt), 'tool-call-start')).toHaveLength(1);
      expect(ofType(run.events.slice(0, discardAt), 'tool-call-end')).toEqual([]);
      const fragments = ofType(run.events.slice(discardAt), 'tool-call-delta')
        .map((event) => event.argsTextDelta)
        .join('');
      expect(fragments).toBe(JSON.stringify(call.arguments));
      expect(ofType(run.events, 'tool-call-end')).toEqual([expect.objectContaining({ args: call.arguments })]);
      expect(ofType(run.events, 'tool-result')).toHaveLength(1);

      const turn = await api.get(`/v1/turns/${run.turnId}`);
      expect(turn.body.toolCalls).toEqual([expect.objectContaining({ step: 1, argumentsText: JSON.stringify(call.arguments), status: 'succeeded', attempts: 1 })]);
      expect(turn.body).toMatchObject({ status: 'completed', step: 2, attempt: 2, providerRetries: 1, partialToolCalls: [] });
      const stored = await assistantMessages(run.conversationId);
      expect(stored.map((message) => message.step)).toEqual([1, 2]);
      expect(stored[1]!.content).toBe('It is 42.');
      await expectInvariants({ [run.turnId]: 'completed' });
    });
  });

  describe('headers, then silence (case 14)', () => {
    it('aborts a stream that sends nothing after its headers and retries it', async () => {
      const run = await runTurn({ attempts: [{ stallAfterTokens: 0 }, { text: TEXT }] });
      const requests = requestsOf(run.marker);
      expect(requests).toHaveLength(2);
      // The idle timer starts just before the request leaves, so a few ms before it is received.
      expect(requests[1]!.receivedAt - requests[0]!.receivedAt).toBeGreaterThanOrEqual(IDLE_TIMEOUT_MS - 50);
      expect(typesOf(run.events)).toEqual(['turn-start', 'step-start', 'provider-retry', 'turn-start', 'step-start', 'step-finish', 'turn-finish']);
      expect(ofType(run.events, 'provider-retry')[0].reason).toContain(`${IDLE_TIMEOUT_MS} ms`);
      expect(await assistantMessages(run.conversationId)).toEqual([{ step: 1, content: TEXT }]);
      const turn = await api.get(`/v1/turns/${run.turnId}`);
      expect(turn.body).toMatchObject({ status: 'completed', attempt: 2, providerRetries: 1, lastError: { code: 'idle_timeout' } });
      await expectInvariants({ [run.turnId]: 'completed' });
    });

    it('aborts a stream that goes silent mid-answer, discards what it sent, and retries', async () => {
      const run = await runTurn({ attempts: [{ text: TEXT, stallAfterTokens: 3 }, { text: TEXT }] });
      expect(requestsOf(run.marker)).toHaveLength(2);
      expect(typesOf(run.events)).toEqual(['turn-start', 'step-start', 'attempt-discarded', 'provider-retry', 'turn-start', 'step-start', 'step-finish', 'turn-finish']);
      expect(visibleStepTexts(run.events)).toEqual(new Map([[1, TEXT]]));
      expect(await assistantMessages(run.conversationId)).toEqual([{ step: 1, content: TEXT }]);
      const turn = await api.get(`/v1/turns/${run.turnId}`);
      expect(turn.body).toMatchObject({ status: 'completed', lastError: { code: 'idle_timeout' } });
      await expectInvariants({ [run.turnId]: 'completed' });
    });
  });

  describe('streams that end badly (case 15)', () => {
    it('retries a stream that ends without finish_reason instead of taking it as the answer', async () => {
      const run = await runTurn({ attempts: [{ text: 'half an ans', omitFinishReason: true }, { text: TEXT }] });
      expect(requestsOf(run.marker)).toHaveLength(2);
      expect(ofType(run.events, 'attempt-discarded')).toEqual([expect.objectContaining({ attempt: 1, step: 1 })]);
      expect(ofType(run.events, 'provider-retry')[0].reason).toContain('finish_reason');
      expect(visibleStepTexts(run.events)).toEqual(new Map([[1, TEXT]]));
      expect(await assistantMessages(run.conversationId)).toEqual([{ step: 1, content: TEXT }]);
      const turn = await api.get(`/v1/turns/${run.turnId}`);
      expect(turn.body).toMatchObject({ status: 'completed', attempt: 2, providerRetries: 1, lastError: { code: 'truncated' } });
      await expectInvariants({ [run.turnId]: 'completed' });
    });

    it('never completes a turn on streams that always end without finish_reason', async () => {
      const run = await runTurn({ text: 'never finished', omitFinishReason: true });
      expect(requestsOf(run.marker)).toHaveLength(MAX_RETRIES + 1);
      expect(run.events.at(-1)).toMatchObject({ type: 'turn-error', error: { code: 'retries_exhausted' } });
      expect(ofType(run.events, 'step-finish')).toEqual([]);
      expect(await assistantMessages(run.conversationId)).toEqual([]);
      await expectInvariants({ [run.turnId]: 'failed' });
    });

    it.each([
      ['after some tokens', 3, true],
      ['before any token', 0, false],
    ])('retries a 200 whose stream carries an error event %s', async (_name, afterTokens, outputSent) => {
      const run = await runTurn({ attempts: [{ text: TEXT, errorEventAfterTokens: afterTokens }, { text: TEXT }] });
      expect(requestsOf(run.marker)).toHaveLength(2);
      expect(ofType(run.events, 'attempt-discarded')).toHaveLength(outputSent ? 1 : 0);
      expect(ofType(run.events, 'provider-retry')).toHaveLength(1);
      expect(run.events.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'stop' });
      expect(visibleStepTexts(run.events)).toEqual(new Map([[1, TEXT]]));
      expect(await assistantMessages(run.conversationId)).toEqual([{ step: 1, content: TEXT }]);
      const turn = await api.get(`/v1/turns/${run.turnId}`);
      expect(turn.body).toMatchObject({ status: 'completed', attempt: 2, providerRetries: 1, lastError: { code: 'stream_error' } });
      await expectInvariants({ [run.turnId]: 'completed' });
    });
  });

  describe('a stream aborted by Switchyard itself', () => {
    it('is not a provider failure: a cancelled turn is not retried, counted or announced as a retry', async () => {
      const run = await startTurn({ tokens: 2000, tokenDelayMs: 5 });
      await run.client.waitFor((frame) => frame.type === 'event' && frame.event.type === 'text-delta' && frame.event.turnId === run.turnId);
      expect((await api.post(`/v1/turns/${run.turnId}/cancel`)).status).toBe(200);
      await run.client.waitForTurnEnd(run.turnId);
      // The worker's run ends after the cancel; a later turn of the conversation starts only after it let go.
      const next = await api.post(`/v1/conversations/${run.conversationId}/turns`, { content: '[[scripted {"text": "next"}]]' });
      expect(next.status).toBe(202);
      const events = (await run.client.waitForTurnEnd(next.body.turnId)).filter((event) => event.turnId === run.turnId);
      expect(events.at(-1).type).toBe('turn-cancelled');
      expect(ofType(events, 'provider-retry')).toEqual([]);
      expect(requestsOf(run.marker)).toHaveLength(1);
      const turn = await api.get(`/v1/turns/${run.turnId}`);
      expect(turn.body).toMatchObject({ status: 'cancelled', providerRetries: 0, lastError: null });
      await expectInvariants({ [run.turnId]: 'cancelled', [next.body.turnId]: 'completed' });
    });
  });
});
