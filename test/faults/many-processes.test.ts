import { apiClient } from '../support/http';
import { checkInvariants } from '../support/invariants';
import { spawnServices, workerThatStarted, type ServiceProcess } from '../support/processes';
import { startTestStack, type TestStack } from '../support/stack';
import { startToolHttpServer, writeToolsDir, type ToolHttpServer } from '../support/tool-servers';
import { scripted } from '../support/tool-turns';
import { isEvent, TestWsClient } from '../support/ws-client';

/**
 * Two API processes (each with its gateway) and three workers on one Redis and one PostgreSQL:
 * 200 turns with tools from three users, subscribers on both gateways, one worker SIGKILLed and
 * one SIGTERMed midway. Every turn ends, every subscriber gets every event of its conversations
 * exactly once, and no stored tool result runs again.
 */
/**
 * The turn posted right after the midpoint streams its first attempt for seconds: the worker
 * running it is killed once a subscriber sees it stream, so the kill lands mid-stream under any
 * load (a short turn could end between its worker's log line and the kill). A new attempt
 * answers at the usual pace.
 */
const LONG_FIRST_ATTEMPT = {
  attempts: [
    { tokens: 300, tokenDelayMs: 10 },
    { tokens: 30, tokenDelayMs: 10 },
  ],
};

describe('many processes, two of them stopped midway', () => {
  let tools: ToolHttpServer;
  let stack: TestStack;
  const processes: ServiceProcess[] = [];
  const clients: TestWsClient[] = [];

  beforeAll(async () => {
    tools = await startToolHttpServer();
    tools.route('/lookup', (request) => ({ delayMs: 30, body: { found: (request.body as { id: number }).id } }));
    const toolsDir = await writeToolsDir({
      'lookup.json': { name: 'lookup', description: 'Looks a record up', url: `${tools.url}/lookup`, fields: [{ name: 'id', type: 'integer', required: true }], retries: 0 },
    });
    stack = await startTestStack({ workers: 0, env: { TOOLS_DIR: toolsDir } });
    const env = stack.childEnv({ LOCK_DURATION_MS: '2000', STALLED_INTERVAL_MS: '500', RECONCILE_INTERVAL_MS: '1000', WORKER_CONCURRENCY: '8' });
    processes.push(...(await spawnServices(env, { apis: 2, workers: 3 })));
  }, 60_000);
  afterAll(async () => {
    for (const client of clients) client.close();
    await Promise.all(processes.map((service) => service.kill('SIGKILL')));
    await stack.close();
    await tools.close();
  });

  it('ends every turn, relays every event once to both gateways, and runs no stored tool result again', async () => {
    const [apiA, apiB, ...workers] = processes;
    const users = await Promise.all(['ada', 'bo', 'cy'].map((name) => stack.createUser(name)));
    const perUser = await Promise.all(
      users.map(async ({ apiKey }) => {
        const api = [apiClient(apiA!.url, apiKey), apiClient(apiB!.url, apiKey)] as const;
        const conversations = await Promise.all(Array.from({ length: 12 }, async () => (await api[0].post('/v1/conversations', {})).body.id as string));
        const watchers = await Promise.all([TestWsClient.connect(apiA!.url, { apiKey }), TestWsClient.connect(apiB!.url, { apiKey })]);
        clients.push(...watchers);
        for (const watcher of watchers) {
          for (const conversationId of conversations) watcher.send({ type: 'subscribe', conversationId });
          await watcher.waitFor(() => watcher.frames.filter((frame) => frame.type === 'subscribed').length === conversations.length);
        }
        return { api, conversations, watchers };
      }),
    );

    const turns: { turnId: string; user: number }[] = [];
    let stopping: Promise<void> | undefined;
    let killedMidStream: string | undefined;
    for (let i = 0; i < 200; i++) {
      const user = i % 3;
      const { api, conversations, watchers } = perUser[user]!;
      const conversationId = conversations[i % conversations.length]!;
      const scenario =
        i % 4 === 0
          ? {
              steps: [
                {
                  toolCalls: [
                    { name: 'lookup', arguments: { id: i } },
                    { name: 'lookup', arguments: { id: i + 1000 } },
                  ],
                },
                { text: `found ${i}` },
              ],
            }
          : i === 61
            ? LONG_FIRST_ATTEMPT
            : { tokens: 30, tokenDelayMs: 10 };
      const posted = await api[i % 2]!.post(`/v1/conversations/${conversationId}/turns`, { content: scripted(scenario), onBusy: 'enqueue' });
      expect(posted.status).toBe(202);
      const turnId = posted.body.turnId as string;
      turns.push({ turnId, user });
      if (i === 61) {
        // Midway, while it streams the long turn (turns go on being posted meanwhile): its worker
        // dies, another is stopped as a deploy would; the third carries on.
        stopping = (async () => {
          await watchers[0]!.waitFor(isEvent('text-delta', turnId), 60_000);
          const victim = await workerThatStarted(workers, turnId);
          await victim.kill('SIGKILL');
          killedMidStream = turnId;
          void workers.find((worker) => worker !== victim)!.kill('SIGTERM');
        })();
      }
    }
    await stopping;

    for (const { turnId, user } of turns) {
      for (const watcher of perUser[user]!.watchers) await watcher.waitForTurnEnd(turnId, 30_000);
    }
    for (const { conversations, watchers } of perUser) {
      const [onA, onB] = watchers.map((watcher) => watcher.events());
      for (const conversationId of conversations) {
        const seqsA = onA!.filter((event) => event.conversationId === conversationId).map((event) => event.seq);
        const seqsB = onB!.filter((event) => event.conversationId === conversationId).map((event) => event.seq);
        expect(seqsA).toEqual(Array.from({ length: seqsA.length }, (_, i) => i + 1));
        expect(seqsB).toEqual(seqsA);
      }
      expect(onA!.map((event) => JSON.stringify(event))).toEqual(onB!.map((event) => JSON.stringify(event)));
    }
    // The SIGKILL cost something: the turn it was running was taken over by a new attempt.
    const taken = await stack.resources.db.query<{ attempt: number }>('SELECT attempt FROM turns WHERE id = $1', [killedMidStream]);
    expect(taken.rows[0]!.attempt).toBeGreaterThan(1);
    const events = perUser.flatMap(({ watchers }) => watchers[0]!.events());
    const statuses = await checkInvariants(stack.resources.db, { turnIds: turns.map((turn) => turn.turnId), toolExecutions: tools.executions('/lookup'), events });
    expect(Object.values(statuses).filter((status) => status !== 'completed')).toEqual([]);
  }, 180_000);
});
