import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { SwitchyardClient, type SwitchyardEvent } from '@switchyard/client';
import { eventsOfTurn, visibleStepTexts } from '../support/client-view';
import { apiClient } from '../support/http';
import { checkInvariants } from '../support/invariants';
import { waitForNoJobLeft } from '../support/job-counts';
import { spawnServices, workerThatStarted, type ServiceProcess } from '../support/processes';
import { startPrivateRedis, type PrivateRedis } from '../support/redis-server';
import { startTestStack, type TestStack } from '../support/stack';
import { startToolHttpServer, writeToolsDir, type ToolHttpServer } from '../support/tool-servers';
import { scripted } from '../support/tool-turns';

const TERMINAL = new Set(['turn-finish', 'turn-error', 'turn-cancelled']);
const CONVERSATIONS = 10;
const CLIENTS_PER_CONVERSATION = 10;
const TURNS = 60;
/**
 * The text turns among the ten posted once the faults start (one per conversation) stream their
 * first attempt for seconds: the worker that runs the first of them a client sees streaming is
 * killed, and under any load the kill lands before that answer could end. A later attempt
 * answers at the usual pace.
 */
const LONG_TURNS = { from: 16, to: 25 };
const LONG_FIRST_ATTEMPT = {
  attempts: [
    { tokens: 400, tokenDelayMs: 10 },
    { tokens: 80, tokenDelayMs: 8 },
  ],
};

/** One websocket client of the client library, following one conversation. */
interface Watcher {
  client: SwitchyardClient;
  conversationId: string;
  gateway: 'A' | 'B';
  /** Resolves once the gateway confirmed the subscription. */
  ready: Promise<void>;
  /** Every event delivered, in order. */
  events: SwitchyardEvent[];
  /** The turns whose last event it received. */
  ended: Set<string>;
  reloads: number;
  errors: unknown[];
}

/**
 * docs/RELIABILITY.md case 34: load under faults. Two API processes and three workers on a private
 * Redis with AOF; 100 websocket clients (the client library, which resumes by seq) follow ten
 * conversations, ten clients each, half on each gateway; 60 turns, long streamed answers and
 * answers after two parallel HTTP tool calls. Midway one worker is SIGKILLed while it streams an
 * answer, then Redis is SIGKILLed while answers stream and started again from its AOF. Every
 * turn completes, every client sees each of its conversation's events exactly once in seq
 * order (the same events as every other client), and shows of every step the stored text.
 */
describe('load under faults', () => {
  let redis: PrivateRedis;
  let tools: ToolHttpServer;
  let stack: TestStack;
  const processes: ServiceProcess[] = [];
  const watchers: Watcher[] = [];
  const eventWaiters = new Set<(event: SwitchyardEvent) => void>();

  beforeAll(async () => {
    redis = await startPrivateRedis();
    tools = await startToolHttpServer();
    tools.route('/lookup', (request) => ({ delayMs: 50, body: { found: (request.body as { id: number }).id } }));
    const toolsDir = await writeToolsDir({
      'lookup.json': { name: 'lookup', description: 'Looks a record up', url: `${tools.url}/lookup`, fields: [{ name: 'id', type: 'integer', required: true }], retries: 0 },
    });
    stack = await startTestStack({ workers: 0, env: { REDIS_URL: redis.url, TOOLS_DIR: toolsDir } });
    const env = stack.childEnv({ LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '500', RECONCILE_INTERVAL_MS: '1000', WORKER_CONCURRENCY: '8' });
    processes.push(...(await spawnServices(env, { apis: 2, workers: 3 })));
  }, 60_000);
  afterAll(async () => {
    for (const { client } of watchers) client.close();
    // A process told to stop while a Redis connection of its waits to reconnect may not exit.
    await Promise.all(processes.map((service) => service.kill('SIGKILL')));
    await stack?.close();
    await tools?.close();
    await redis?.close();
  });

  it('completes every turn and gives every client every event once and the stored text', async () => {
    const [apiA, apiB, ...workers] = processes;
    const users = await Promise.all(['ada', 'bo'].map((name) => stack.createUser(name)));
    const conversations = await Promise.all(
      Array.from({ length: CONVERSATIONS }, async (_, i) => {
        const { apiKey } = users[i % users.length]!;
        const api = [apiClient(apiA!.url, apiKey), apiClient(apiB!.url, apiKey)] as const;
        const created = await api[0].post('/v1/conversations', {});
        expect(created.status).toBe(201);
        return { id: created.body.id as string, apiKey, api };
      }),
    );
    for (const conversation of conversations) {
      for (let n = 0; n < CLIENTS_PER_CONVERSATION; n++) {
        watchers.push(watch(n % 2 === 0 ? 'A' : 'B', conversation.id, conversation.apiKey));
      }
    }
    await Promise.all(watchers.map((watcher) => watcher.ready));

    // The faults, once the load is under way: the worker streaming a long answer is SIGKILLed
    // (turns go on being posted); then, at the next text delta a client receives, so while
    // answers stream, Redis is SIGKILLed, and started again from its AOF once every process
    // still running has found it gone.
    const endedAnywhere = () => new Set(watchers.flatMap((watcher) => [...watcher.ended]));
    const longTurns = new Set<string>();
    let killedMidStream: string | undefined;
    let streamingAtCrash: string[] = [];
    let faults: Promise<void> | undefined;
    const startFaults = () => {
      faults = (async () => {
        const { turnId } = await waitForEvent(
          (event) => event.type === 'text-delta' && longTurns.has(event.turnId) && !endedAnywhere().has(event.turnId),
          60_000,
          'a client to receive a long answer',
        );
        const victim = await workerThatStarted(workers, turnId);
        await victim.kill('SIGKILL');
        killedMidStream = turnId;
        const survivors = workers.filter((worker) => worker !== victim);
        await waitForEvent((event) => event.type === 'text-delta', 60_000, 'a text delta after the worker was killed');
        // The turns some client was in the middle of receiving an answer of.
        streamingAtCrash = [
          ...new Set(watchers.flatMap((watcher) => watcher.events.filter((event) => event.type === 'text-delta' && !watcher.ended.has(event.turnId)).map((event) => event.turnId))),
        ];
        const crashedAt = Date.now();
        await redis.crash();
        const logsSince = (msg: string) =>
          Promise.all([apiA!, apiB!, ...survivors].map((service) => service.waitForLog((entry) => entry.msg === msg && entry.time >= crashedAt, 30_000)));
        await logsSince('redis connection error');
        await redis.start();
        // Every process reconnects by itself.
        await logsSince('redis connection restored');
      })();
    };

    const turns: { turnId: string; conversationId: string }[] = [];
    for (let i = 0; i < TURNS; i++) {
      const conversation = conversations[i % CONVERSATIONS]!;
      const scenario =
        i % 3 === 0
          ? {
              steps: [
                {
                  toolCalls: [
                    { name: 'lookup', arguments: { id: i } },
                    { name: 'lookup', arguments: { id: i + 1000 } },
                  ],
                },
                { text: `found ${i} and ${i + 1000}`, tokenDelayMs: 5 },
              ],
            }
          : i >= LONG_TURNS.from && i <= LONG_TURNS.to
            ? LONG_FIRST_ATTEMPT
            : { tokens: 80, tokenDelayMs: 8 };
      const turnId = await postTurn(conversation.api[i % 2]!, conversation.id, `${randomBytes(4).toString('hex')} ${scripted(scenario)}`, () => faults);
      turns.push({ turnId, conversationId: conversation.id });
      if (scenario === LONG_FIRST_ATTEMPT) longTurns.add(turnId);
      if (i === 15) startFaults();
    }
    await faults;
    // Redis went down while answers were streaming.
    expect(streamingAtCrash.length).toBeGreaterThan(0);

    // Every client sees every turn of its conversation end.
    const ownTurns = (watcher: Watcher) => turns.filter((turn) => turn.conversationId === watcher.conversationId);
    const allEnded = () => watchers.every((watcher) => ownTurns(watcher).every((turn) => watcher.ended.has(turn.turnId)));
    if (!allEnded()) await waitForEvent((event) => TERMINAL.has(event.type) && allEnded(), 90_000, 'every client to see every turn of its conversation end');

    const turnIds = turns.map((turn) => turn.turnId);
    const { rows: messages } = await stack.resources.db.query<{ turn_id: string; step: number; content: unknown }>(
      `SELECT turn_id, step, content FROM messages WHERE turn_id = ANY($1) AND role = 'assistant' ORDER BY step`,
      [turnIds],
    );
    const storedOf = (turnId: string) => new Map(messages.filter((row) => row.turn_id === turnId).map((row) => [row.step, typeof row.content === 'string' ? row.content : '']));
    for (const conversation of conversations) {
      const { lastSeq } = (await conversation.api[0].get(`/v1/conversations/${conversation.id}`)).body as { lastSeq: number };
      const ofConversation = watchers.filter((watcher) => watcher.conversationId === conversation.id);
      const reference = ofConversation[0]!.events.map((event) => JSON.stringify(event));
      for (const watcher of ofConversation) {
        // Seqs 1..lastSeq: no gap, no duplicate, nothing reloaded, nothing failed.
        expect({ gateway: watcher.gateway, reloads: watcher.reloads, errors: watcher.errors, seqs: watcher.events.map((event) => event.seq) }).toEqual({
          gateway: watcher.gateway,
          reloads: 0,
          errors: [],
          seqs: Array.from({ length: lastSeq }, (_, i) => i + 1),
        });
        expect(watcher.events.map((event) => JSON.stringify(event))).toEqual(reference);
        // What the client shows of each step is the stored assistant message.
        for (const turn of turns.filter((candidate) => candidate.conversationId === conversation.id)) {
          expect({ turnId: turn.turnId, steps: visibleStepTexts(eventsOfTurn(watcher.events, turn.turnId)) }).toEqual({ turnId: turn.turnId, steps: storedOf(turn.turnId) });
        }
      }
    }

    // The faults cost something: a new attempt took over the turn whose worker was killed.
    const taken = await stack.resources.db.query<{ id: string }>('SELECT id FROM turns WHERE id = ANY($1) AND attempt > 1', [turnIds]);
    expect(taken.rows.map((row) => row.id)).toContain(killedMidStream);
    const events = watchers.filter((_, i) => i % CLIENTS_PER_CONVERSATION === 0).flatMap((watcher) => watcher.events);
    const statuses = await checkInvariants(stack.resources.db, { turnIds, toolExecutions: tools.executions('/lookup'), events });
    expect(Object.entries(statuses).filter(([, status]) => status !== 'completed')).toEqual([]);
    // No job is left behind in a state that would still run.
    await waitForNoJobLeft(stack.resources.turnQueue);
  }, 180_000);

  /** Resolves with the first event any client receives that passes `check`. */
  function waitForEvent(check: (event: SwitchyardEvent) => boolean, timeoutMs: number, what: string): Promise<SwitchyardEvent> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        eventWaiters.delete(waiter);
        reject(new Error(`timed out waiting for ${what}`));
      }, timeoutMs);
      const waiter = (event: SwitchyardEvent) => {
        if (!check(event)) return;
        clearTimeout(timer);
        eventWaiters.delete(waiter);
        resolve(event);
      };
      eventWaiters.add(waiter);
    });
  }

  /**
   * Posts a turn with an idempotency key. A 503 while Redis is down (the turn is recorded but
   * could not be enqueued yet) is repeated with the same key once Redis is back and every
   * process has reconnected, as API.md tells clients to: the repeat returns the same turn,
   * never a second one.
   */
  async function postTurn(api: ReturnType<typeof apiClient>, conversationId: string, content: string, outage: () => Promise<void> | undefined): Promise<string> {
    const idempotencyKey = randomBytes(8).toString('hex');
    for (let attempt = 1; ; attempt++) {
      const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content, idempotencyKey, onBusy: 'enqueue' });
      if (posted.status === 202 || posted.status === 200) return posted.body.turnId as string;
      const over = outage();
      if (posted.status !== 503 || !over || attempt === 3) throw new Error(`posting a turn answered ${posted.status}: ${JSON.stringify(posted.body)}`);
      await over;
    }
  }

  function watch(gateway: 'A' | 'B', conversationId: string, apiKey: string): Watcher {
    const baseUrl = processes[gateway === 'A' ? 0 : 1]!.url;
    const client = new SwitchyardClient({ baseUrl, token: apiKey, WebSocket, reconnect: { initialDelayMs: 100, maxDelayMs: 1_000 } });
    const watcher: Watcher = { client, conversationId, gateway, ready: Promise.resolve(), events: [], ended: new Set(), reloads: 0, errors: [] };
    const subscription = client.subscribe(conversationId, {
      onEvent(event) {
        watcher.events.push(event);
        if (TERMINAL.has(event.type)) watcher.ended.add(event.turnId);
        for (const waiter of [...eventWaiters]) waiter(event);
      },
      onReload: () => void watcher.reloads++,
      onError: (error) => void watcher.errors.push(error),
    });
    watcher.ready = subscription.ready;
    return watcher;
  }
});
