import { apiClient } from '../support/http';
import { spawnService, type ServiceProcess } from '../support/processes';
import { startTestStack, type TestStack } from '../support/stack';
import { TestWsClient } from '../support/ws-client';

/** Two API/gateway processes and two worker processes sharing one Redis and one PostgreSQL. */
describe('several processes', () => {
  let stack: TestStack;
  const processes: ServiceProcess[] = [];

  beforeAll(async () => {
    stack = await startTestStack({ workers: 0 });
    // Concurrency 1 makes both workers take turns, so the test shows them sharing the queue.
    const env = stack.childEnv({ WORKER_CONCURRENCY: '1' });
    processes.push(...(await Promise.all([spawnService('api', env), spawnService('api', env), spawnService('worker', env), spawnService('worker', env)])));
  }, 60_000);
  afterAll(async () => {
    await Promise.all(processes.map((service) => service.kill('SIGTERM')));
    await stack.close();
  });

  it('relays every turn to subscribers on both gateways, in order, whichever worker ran it', async () => {
    const [apiA, apiB, workerA, workerB] = processes;
    const { apiKey } = await stack.createUser('multi');
    const viaA = apiClient(apiA!.url, apiKey);
    const conversations = await Promise.all(Array.from({ length: 6 }, async () => (await viaA.post('/v1/conversations', {})).body.id as string));
    const clientA = await TestWsClient.connect(apiA!.url, { apiKey });
    const clientB = await TestWsClient.connect(apiB!.url, { apiKey });
    for (const conversationId of conversations) {
      clientA.send({ type: 'subscribe', conversationId });
      clientB.send({ type: 'subscribe', conversationId });
    }
    await clientA.waitFor(() => clientA.frames.filter((f) => f.type === 'subscribed').length === conversations.length);
    await clientB.waitFor(() => clientB.frames.filter((f) => f.type === 'subscribed').length === conversations.length);

    // Posted through the second API: any API process can take a turn for any conversation.
    const viaB = apiClient(apiB!.url, apiKey);
    const turns = await Promise.all(
      conversations.map(async (conversationId, i) => {
        const posted = await viaB.post(`/v1/conversations/${conversationId}/turns`, {
          content: `[[scripted {"text":"answer number ${i} from some worker","tokenDelayMs":10}]]`,
        });
        expect(posted.status).toBe(202);
        return posted.body.turnId as string;
      }),
    );
    for (const turnId of turns) {
      await clientA.waitForTurnEnd(turnId);
      await clientB.waitForTurnEnd(turnId);
    }
    for (const conversationId of conversations) {
      const seen = (client: TestWsClient) => client.events().filter((e) => e.conversationId === conversationId);
      expect(seen(clientA).map((e) => e.seq)).toEqual(seen(clientA).map((_, i) => i + 1));
      expect(seen(clientB)).toEqual(seen(clientA));
      expect(seen(clientA).at(-1).type).toBe('turn-finish');
    }

    const started = async (worker: ServiceProcess) => {
      const text = await (await fetch(`${worker.url}/metrics`)).text();
      return Number(/^switchyard_turns_started_total (\d+)/m.exec(text)?.[1] ?? 0);
    };
    const counts = [await started(workerA!), await started(workerB!)];
    expect(counts[0]! + counts[1]!).toBe(turns.length);
    expect(Math.min(...counts)).toBeGreaterThan(0);
    clientA.close();
    clientB.close();
  }, 60_000);
});
