import { poll } from '../../support/poll';
import { Redis } from 'ioredis';
import { EventLogRestartedError, subscribeToConversation, type SubscribeOutcome } from '../../../src/subscriptions/conversation-subscription';
import type { EventBody } from '../../../src/events/event';
import { AttemptFencedError, EventLog, inflightStateKey, TurnEndAnnouncedError, type EventPage } from '../../../src/event-log/event-log';
import { LiveEvents } from '../../../src/event-log/live-events';
import { DeltaPacing } from '../../../src/event-log/delta-pacing';
import { TurnEvents } from '../../../src/event-log/turn-events';
import { uniqueSuffix } from '../../support/ids';
import { dropRedisPrefix, TEST_REDIS_URL } from '../../support/services';

const delta = (conversationId: string, text: string): EventBody => ({ type: 'text-delta', delta: text, conversationId, turnId: 't1' });

describe('the event log and replay-then-live subscriptions (real Redis)', () => {
  const prefix = `test-${uniqueSuffix()}`;
  const floors = new Map<string, number>();
  let redis: Redis;
  let subscriber: Redis;
  let log: EventLog;
  let live: LiveEvents;

  beforeAll(() => {
    redis = new Redis(TEST_REDIS_URL);
    subscriber = new Redis(TEST_REDIS_URL);
    log = new EventLog({ redis, prefix, maxLength: 1000, ttlSeconds: 60, seqFloor: async (id) => floors.get(id) ?? 0 });
    live = new LiveEvents(subscriber, (id) => log.channel(id));
  });
  afterAll(async () => {
    redis.disconnect();
    subscriber.disconnect();
    await dropRedisPrefix(prefix);
  });

  const subscribe = (conversationId: string, after: number | undefined, seen: { seq: number; json: string }[]) =>
    subscribeToConversation(
      { eventLog: log, liveEvents: live },
      {
        conversationId,
        after,
        deliver: (json, seq) => seen.push({ seq, json }),
        onError: (error) => {
          throw error;
        },
      },
    );

  it('numbers events from 1 per conversation and stores them with their seq first', async () => {
    const id = `c-${uniqueSuffix()}`;
    expect(await log.append(delta(id, 'a'))).toBe(1);
    expect(await log.appendBatch(id, [delta(id, 'b'), delta(id, 'c')])).toBe(3);
    const { events } = await log.read(id, 1);
    expect(events.map((e) => e.seq)).toEqual([2, 3]);
    expect(JSON.parse(events[0]!.json)).toEqual({ seq: 2, ...delta(id, 'b') });
    expect(events[0]!.json.startsWith('{"seq":2,')).toBe(true);
    expect(await log.window(id)).toEqual({ oldestSeq: 1, latestSeq: 3 });
  });

  it('keeps a subscription from 0 in the window when a short turn appends and commits between its reads of the log and of the floor', async () => {
    const id = `c-${uniqueSuffix()}`;
    let appended = false;
    // The floor is read after the log: here the turn's events and its commit land in between.
    const racing = new EventLog({
      redis,
      prefix,
      maxLength: 1000,
      ttlSeconds: 60,
      seqFloor: async () => {
        if (!appended) {
          appended = true;
          await log.appendBatch(id, [delta(id, 'a'), delta(id, 'b'), delta(id, 'c')]);
        }
        return 3;
      },
    });
    expect(await racing.window(id)).toEqual({ oldestSeq: 1, latestSeq: 3 });
    // A log Redis lost (no counter, no stream): the floor is the window.
    const lost = new EventLog({ redis, prefix, maxLength: 1000, ttlSeconds: 60, seqFloor: async () => 7 });
    expect(await lost.window(`c-${uniqueSuffix()}`)).toEqual({ oldestSeq: null, latestSeq: 7 });
  });

  it("writes a turn's in-flight state with its batch, alone or with events, and never for a worker fenced off", async () => {
    const id = `c-${uniqueSuffix()}`;
    const key = inflightStateKey(prefix, id, 't1');
    const state = (value: string | null) => ({ turnId: 't1', value, ttlSeconds: 60 });

    expect(await log.appendBatch(id, [delta(id, 'a')], { turnId: 't1', attempt: 1 }, state('{"step":1}'))).toBe(1);
    expect(await redis.get(key)).toBe('{"step":1}');
    expect(await redis.ttl(key)).toBeGreaterThan(0);

    // Attempt 2 took over: attempt 1's batch, and the state it carries, are refused.
    expect(await log.appendBatch(id, [delta(id, 'b')], { turnId: 't1', attempt: 2 })).toBe(2);
    await expect(log.appendBatch(id, [delta(id, 'c')], { turnId: 't1', attempt: 1 }, state('{"step":9}'))).rejects.toBeInstanceOf(AttemptFencedError);
    expect(await redis.get(key)).toBe('{"step":1}');

    // A batch without events writes the state and appends nothing.
    expect(await log.appendBatch(id, [], { turnId: 't1', attempt: 2 }, state(null))).toBe(0);
    expect(await redis.exists(key)).toBe(0);
    expect(await log.window(id)).toEqual({ oldestSeq: 1, latestSeq: 2 });
  });

  it("fences a turn's attempts below one, appending nothing: their batches are refused, that attempt's go through", async () => {
    const id = `c-${uniqueSuffix()}`;
    const worker = { turnId: 't1', attempt: 1 };
    expect(await log.appendBatch(id, [delta(id, 'shown')], worker)).toBe(1);
    await log.fenceAttemptsBelow(id, 't1', 2);
    await expect(log.appendBatch(id, [delta(id, 'after the fence')], worker)).rejects.toBeInstanceOf(AttemptFencedError);
    expect((await log.read(id, 0)).events.map((event) => JSON.parse(event.json).delta)).toEqual(['shown']);
    // Fencing below an attempt already passed changes nothing; the next attempt still appends.
    expect(await log.appendBatch(id, [delta(id, 'attempt 3')], { turnId: 't1', attempt: 3 })).toBe(2);
    await log.fenceAttemptsBelow(id, 't1', 2);
    expect(await log.appendBatch(id, [delta(id, 'still 3')], { turnId: 't1', attempt: 3 })).toBe(3);
    expect((await log.readNow(id, 1)).events.map((event) => event.seq)).toEqual([2, 3]);
  });

  it("sends a turn's in-flight state with its next batch of events, or alone when flushed without one", async () => {
    const id = `c-${uniqueSuffix()}`;
    const key = inflightStateKey(prefix, id, 't1');
    const events = new TurnEvents(log, id, 't1', { attempt: 1 });
    events.setInflight('{"step":1}', 60);
    events.emit({ type: 'text-delta', delta: 'a' });
    expect(await events.flush()).toBe(1);
    expect(await redis.get(key)).toBe('{"step":1}');

    events.clearInflight();
    expect(await events.flush()).toBe(1);
    expect(await redis.exists(key)).toBe(0);
  });

  it('gathers the deltas that follow deltas while many answers stream, in order, and sends them at once with any other event or a flush', async () => {
    const id = `c-${uniqueSuffix()}`;
    // An interval no test waits out: whatever arrives came without waiting for it.
    const pacing = new DeltaPacing({ maxIntervalMs: 600_000, perStreamMs: 600_000 });
    pacing.noteStreaming('another turn');
    const pacedLog = new EventLog({ redis, prefix, maxLength: 1000, ttlSeconds: 60, seqFloor: async () => 0, deltaPacing: pacing });
    const seen: { seq: number; json: string }[] = [];
    const subscribed = await subscribe(id, 0, seen);
    if (!subscribed.ok) throw new Error(subscribed.message);
    subscribed.subscription.start();
    const arrived = (count: number) =>
      new Promise<void>((resolve) => {
        const check = () => (seen.length >= count ? resolve() : setImmediate(check));
        check();
      });

    const events = new TurnEvents(pacedLog, id, 't1', { attempt: 1 });
    events.emit({ type: 'step-start', step: 1 });
    events.emit({ type: 'text-delta', delta: 'a' });
    await arrived(2);
    events.emit({ type: 'text-delta', delta: 'b' });
    events.emit({ type: 'text-delta', delta: 'c' });
    // The deltas that wait go at once, before it, when another event comes.
    events.emit({ type: 'tool-call-start', toolCallId: 'call_1', toolName: 'calculator' });
    await arrived(4);
    // The first delta after another event goes at once; those after it wait.
    events.emit({ type: 'tool-call-delta', toolCallId: 'call_1', argsTextDelta: '{"x"' });
    await arrived(5);
    events.emit({ type: 'tool-call-delta', toolCallId: 'call_1', argsTextDelta: ':1' });
    events.emit({ type: 'tool-call-delta', toolCallId: 'call_1', argsTextDelta: '}' });
    // A flush sends what waits.
    expect(await events.flush()).toBe(6);
    subscribed.subscription.dispose();

    const { events: logged } = await pacedLog.read(id, 0);
    const bodies = logged.map((event) => JSON.parse(event.json) as { seq: number; type: string; delta?: string; argsTextDelta?: string });
    expect(bodies.map((body) => [body.seq, body.type, body.delta ?? body.argsTextDelta])).toEqual([
      [1, 'step-start', undefined],
      [2, 'text-delta', 'a'],
      [3, 'text-delta', 'bc'],
      [4, 'tool-call-start', undefined],
      [5, 'tool-call-delta', '{"x"'],
      [6, 'tool-call-delta', ':1}'],
    ]);
    expect(seen.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5]);
  });

  it("appends a turn's end once, whoever announces it, and refuses the whole second batch", async () => {
    const id = `c-${uniqueSuffix()}`;
    const usage = { promptTokens: 1, completionTokens: 1, totalTokens: 2 };
    const end = (turnId: string): EventBody[] => [
      { type: 'step-finish', step: 1, finishReason: 'stop', usage, conversationId: id, turnId },
      { type: 'turn-finish', finishReason: 'stop', usage, conversationId: id, turnId },
    ];
    expect(await log.appendBatch(id, end('t1'), { turnId: 't1', attempt: 1 })).toBe(2);
    await expect(log.appendBatch(id, end('t1'), { turnId: 't1', attempt: 2 ** 31 - 1 })).rejects.toBeInstanceOf(TurnEndAnnouncedError);
    await expect(log.appendBatch(id, end('t1'))).rejects.toBeInstanceOf(TurnEndAnnouncedError);
    // Another turn of the conversation ends as usual.
    expect(await log.appendBatch(id, end('t2'), { turnId: 't2', attempt: 1 })).toBe(4);
    const { events } = await log.read(id, 0);
    expect(events.map((event) => [JSON.parse(event.json).turnId, JSON.parse(event.json).type])).toEqual([
      ['t1', 'step-finish'],
      ['t1', 'turn-finish'],
      ['t2', 'step-finish'],
      ['t2', 'turn-finish'],
    ]);
  });

  it('reads a page by bytes as well as by count, whatever its events weigh, and says whether more may follow', async () => {
    const id = `c-${uniqueSuffix()}`;
    const large = (i: number) => delta(id, `${i}`.padEnd(300 * 1024, 'x'));
    await log.appendBatch(id, [large(1), large(2), large(3), large(4), delta(id, 'small 5'), delta(id, 'small 6')]);
    const seqs = (page: { events: { seq: number }[] }) => page.events.map((event) => event.seq);
    const bytes = (page: { events: { json: string }[] }) => page.events.reduce((sum, event) => sum + Buffer.byteLength(event.json), 0);

    const first = await log.read(id, 0, { maxBytes: 1024 * 1024 });
    expect([seqs(first), first.full]).toEqual([[1, 2, 3], true]);
    expect(bytes(first)).toBeLessThanOrEqual(1024 * 1024);
    // An event larger than the budget comes alone, so that a reader always gets on.
    expect(seqs(await log.read(id, 0, { maxBytes: 1000 }))).toEqual([1]);
    expect(seqs(await log.read(id, 3, { maxBytes: 1000 }))).toEqual([4]);
    expect(seqs(await log.read(id, 4, { maxBytes: 1000 }))).toEqual([5, 6]);
    expect(await log.read(id, 0, { maxEvents: 2 })).toMatchObject({ events: [{ seq: 1 }, { seq: 2 }], full: true });
    // The end of the log: not full, whether the bounds were reached or not.
    expect(await log.read(id, 3, { maxBytes: 10 * 1024 * 1024 })).toMatchObject({ events: [{ seq: 4 }, { seq: 5 }, { seq: 6 }], full: false });
    expect(await log.read(id, 6)).toEqual({ events: [], full: false });
    expect(JSON.parse((await log.read(id, 3, { maxEvents: 1 })).events[0]!.json)).toEqual({ seq: 4, ...large(4) });
  });

  it('hands a replay on a page of about its budget at a time, every event once and in order', async () => {
    const id = `c-${uniqueSuffix()}`;
    await log.appendBatch(
      id,
      Array.from({ length: 20 }, (_, i) => delta(id, `${i}`.padEnd(200 * 1024, 'x'))),
    );
    const pageBytes: number[] = [];
    const measured = {
      window: (conversationId: string) => log.window(conversationId),
      read: async (conversationId: string, afterSeq: number, page?: EventPage) => {
        const served = await log.read(conversationId, afterSeq, page);
        pageBytes.push(served.events.reduce((sum, event) => sum + Buffer.byteLength(event.json), 0));
        return served;
      },
    };
    const seen: number[] = [];
    const outcome = await subscribeToConversation(
      { eventLog: measured, liveEvents: live, page: { maxBytes: 512 * 1024 } },
      {
        conversationId: id,
        after: 0,
        deliver: (_json, seq) => seen.push(seq),
        onError: (error) => {
          throw error;
        },
      },
    );
    if (!outcome.ok) throw new Error(outcome.message);
    outcome.subscription.start();
    await waitUntil(() => seen.length >= 20);
    outcome.subscription.dispose();
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    // Two events to a page, where the log's own page would have been all 4 MB of them.
    expect(Math.max(...pageBytes)).toBeLessThanOrEqual(512 * 1024);
    expect(pageBytes.filter((bytes) => bytes > 0)).toHaveLength(10);
  });

  it('restarts a lost counter from the floor PostgreSQL keeps, not from 1', async () => {
    const id = `c-${uniqueSuffix()}`;
    floors.set(id, 41);
    expect(await log.latestSeq(id)).toBe(41);
    expect(await log.append(delta(id, 'x'))).toBe(42);
  });

  it('reads again when an event is announced while a read that began before it is on its way', async () => {
    const id = `c-${uniqueSuffix()}`;
    const hinted = new Promise<void>((resolve) => void live.listen(id, () => resolve()));
    let raced = false;
    // The first read is served before the append; its answer arrives after the append's hint.
    const racingLog = {
      window: (conversationId: string) => log.window(conversationId),
      read: async (conversationId: string, afterSeq: number, page?: EventPage) => {
        const served = await log.read(conversationId, afterSeq, page);
        if (!raced) {
          raced = true;
          await log.append(delta(id, 'late'));
          await hinted;
        }
        return served;
      },
    };
    const seen: number[] = [];
    const errors: Error[] = [];
    const outcome = await subscribeToConversation(
      { eventLog: racingLog, liveEvents: live },
      { conversationId: id, after: 0, deliver: (_json, seq) => seen.push(seq), onError: (error) => errors.push(error) },
    );
    if (!outcome.ok) throw new Error(outcome.message);
    outcome.subscription.start();
    await log.append(delta(id, 'next'));
    const deadline = Date.now() + 5000;
    while (seen.length < 2 && errors.length === 0 && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
    outcome.subscription.dispose();
    expect(errors).toEqual([]);
    expect(seen).toEqual([1, 2]);
  });

  it('delivers every event exactly once, in order, while events are appended during the replay', async () => {
    const id = `c-${uniqueSuffix()}`;
    for (let i = 0; i < 700; i++) await log.append(delta(id, `early ${i}`));
    const seen: { seq: number; json: string }[] = [];
    const outcome = (await subscribe(id, 100, seen)) as Extract<SubscribeOutcome, { ok: true }>;
    expect(outcome.ok).toBe(true);
    expect(outcome.subscription.latestSeq).toBe(700);
    // Appends race the replay: some land before the reads reach them, some after.
    const appending = (async () => {
      for (let i = 0; i < 300; i++) await log.appendBatch(id, [delta(id, `late ${i}`)]);
    })();
    outcome.subscription.start();
    await appending;
    await waitUntil(() => seen.length >= 900);
    expect(seen.map((e) => e.seq)).toEqual(Array.from({ length: 900 }, (_, i) => 101 + i));
    outcome.subscription.dispose();
  });

  it('gives live events, and only them, the time they were appended, with the very text the log replays', async () => {
    const id = `c-${uniqueSuffix()}`;
    await log.append(delta(id, 'before'));
    const seen: { seq: number; json: string; appendedAt?: number }[] = [];
    const outcome = await subscribeToConversation(
      { eventLog: log, liveEvents: live },
      {
        conversationId: id,
        after: 0,
        deliver: (json, seq, appendedAt) => seen.push({ seq, json, appendedAt }),
        onError: (error) => {
          throw error;
        },
      },
    );
    if (!outcome.ok) throw new Error(outcome.message);
    outcome.subscription.start();
    await waitUntil(() => seen.length >= 1);
    const appendedFrom = Date.now();
    await log.append(delta(id, 'after'));
    await waitUntil(() => seen.length >= 2);
    outcome.subscription.dispose();

    expect(seen[0]!.appendedAt).toBeUndefined();
    // Redis's clock and ours are the same machine's here; whole milliseconds either side.
    expect(seen[1]!.appendedAt).toBeGreaterThanOrEqual(appendedFrom - 1);
    expect(seen[1]!.appendedAt).toBeLessThanOrEqual(Date.now() + 1);
    const { events } = await log.read(id, 0);
    expect(seen.map((event) => event.json)).toEqual(events.map((event) => event.json));
    expect(JSON.parse(seen[1]!.json)).toEqual({ seq: 2, ...delta(id, 'after') });
    expect(events[1]!.appendedAt).toBe(seen[1]!.appendedAt);
  });

  it('fills a gap that pub/sub left from the log', async () => {
    const id = `c-${uniqueSuffix()}`;
    const seen: { seq: number; json: string }[] = [];
    const outcome = (await subscribe(id, 0, seen)) as Extract<SubscribeOutcome, { ok: true }>;
    outcome.subscription.start();
    // Written straight into the stream, as if its publish had been lost on the way.
    await redis.xadd(`${prefix}:conv:{${id}}:events`, '1-0', 'e', JSON.stringify({ seq: 1, ...delta(id, 'lost') }));
    await redis.set(`${prefix}:conv:{${id}}:seq`, 1);
    await log.append(delta(id, 'next'));
    await waitUntil(() => seen.length >= 2);
    expect(seen.map((e) => e.seq)).toEqual([1, 2]);
    outcome.subscription.dispose();
  });

  it('applies a batch once when the connection sends it again after a reconnect lost the reply', async () => {
    const id = `c-${uniqueSuffix()}`;
    // ioredis resends unanswered commands after a reconnect (autoResendUnfulfilledCommands):
    // the very same call, batch id included, reaches the script a second time.
    const calls: unknown[][] = [];
    const recording = Object.create(redis) as Redis & { appendEvents(...args: unknown[]): Promise<number> };
    recording.appendEvents = (...args: unknown[]) => {
      calls.push(args);
      return (redis as unknown as { appendEvents(...args: unknown[]): Promise<number> }).appendEvents(...args);
    };
    const resending = new EventLog({ redis: recording, prefix, maxLength: 1000, ttlSeconds: 60, seqFloor: async () => 0 });
    expect(await resending.appendBatch(id, [delta(id, 'a'), delta(id, 'b')])).toBe(2);
    const resend = (recording as unknown as { appendEvents(...args: unknown[]): Promise<number> }).appendEvents;
    expect(await resend(...calls[0]!)).toBe(2);
    expect(await resending.append(delta(id, 'c'))).toBe(3);
    expect(await resend(...calls[0]!)).toBe(2);
    expect((await log.read(id, 0)).events.map((event) => JSON.parse(event.json).delta)).toEqual(['a', 'b', 'c']);
  });

  it('answers the latest seq from PostgreSQL at once while Redis is unreachable', async () => {
    const unreachable = new Redis('redis://127.0.0.1:1', { lazyConnect: true, enableOfflineQueue: false, retryStrategy: () => null });
    unreachable.on('error', () => undefined);
    const id = `c-${uniqueSuffix()}`;
    floors.set(id, 17);
    const failFast = new EventLog({
      redis,
      failFastRedis: unreachable,
      prefix,
      maxLength: 1000,
      ttlSeconds: 60,
      seqFloor: async (conversationId) => floors.get(conversationId) ?? 0,
    });
    expect(await failFast.latestSeq(id)).toBe(17);
    unreachable.disconnect();
  });

  describe('after pub/sub reconnected', () => {
    const reconnectable = () => {
      const listeners = new Set<() => void>();
      return {
        onReconnect: (listener: () => void) => {
          listeners.add(listener);
          return () => listeners.delete(listener);
        },
        reconnect: () => listeners.forEach((listener) => listener()),
      };
    };
    const subscribeWith = async (id: string, pubsub: ReturnType<typeof reconnectable>, seen: number[], errors: Error[]) => {
      const outcome = await subscribeToConversation(
        { eventLog: log, liveEvents: live, onReconnect: pubsub.onReconnect },
        { conversationId: id, after: 0, deliver: (_json, seq) => seen.push(seq), onError: (error) => errors.push(error) },
      );
      if (!outcome.ok) throw new Error(outcome.message);
      outcome.subscription.start();
      return outcome.subscription;
    };

    it('reads what pub/sub lost from the log when the log kept its events', async () => {
      const id = `c-${uniqueSuffix()}`;
      const pubsub = reconnectable();
      const seen: number[] = [];
      const errors: Error[] = [];
      const subscription = await subscribeWith(id, pubsub, seen, errors);
      await log.appendBatch(id, [delta(id, 'a'), delta(id, 'b')]);
      await waitUntil(() => seen.length === 2);
      // Appended while pub/sub was away: in the log, never announced.
      await redis.xadd(`${prefix}:conv:{${id}}:events`, '3-0', 'e', JSON.stringify({ seq: 3, ...delta(id, 'missed') }));
      await redis.set(`${prefix}:conv:{${id}}:seq`, 3);
      pubsub.reconnect();
      await waitUntil(() => seen.length === 3);
      expect(seen).toEqual([1, 2, 3]);
      expect(errors).toEqual([]);
      subscription.dispose();
    });

    it('tells the subscriber when Redis came back without the log, instead of skipping and gluing', async () => {
      const id = `c-${uniqueSuffix()}`;
      const pubsub = reconnectable();
      const seen: number[] = [];
      const errors: Error[] = [];
      const subscription = await subscribeWith(id, pubsub, seen, errors);
      for (const text of ['a', 'b', 'c']) await log.append(delta(id, text));
      await waitUntil(() => seen.length === 3);
      // Redis lost the conversation's keys while pub/sub was away; the counter restarted from
      // PostgreSQL's last_seq (1), and the events after it were never announced here.
      await redis.del(`${prefix}:conv:{${id}}:events`, `${prefix}:conv:{${id}}:seq`);
      for (const [index, text] of ['x', 'y', 'z'].entries()) {
        await redis.xadd(`${prefix}:conv:{${id}}:events`, `${index + 2}-0`, 'e', JSON.stringify({ seq: index + 2, ...delta(id, text) }));
      }
      await redis.set(`${prefix}:conv:{${id}}:seq`, 4);
      pubsub.reconnect();
      await waitUntil(() => errors.length > 0);
      expect(errors[0]).toBeInstanceOf(EventLogRestartedError);
      expect(seen).toEqual([1, 2, 3]);
      subscription.dispose();
    });
  });

  it('refuses cursors beyond the latest seq or older than the log keeps', async () => {
    const id = `c-${uniqueSuffix()}`;
    const trimmed = new EventLog({ redis, prefix, maxLength: 1, ttlSeconds: 60, seqFloor: async () => 0 });
    for (let i = 0; i < 300; i++) await trimmed.append(delta(id, String(i)));
    expect(await subscribe(id, 301, [])).toMatchObject({ ok: false, code: 'bad_cursor' });
    const expired = await subscribe(id, 0, []);
    expect(expired).toMatchObject({ ok: false, code: 'cursor_expired' });
    expect((expired as { oldestSeq: number }).oldestSeq).toBeGreaterThan(1);
  });
});

function waitUntil(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  return poll('condition not met in time', condition, timeoutMs, 5);
}
