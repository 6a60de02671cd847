import { poll } from '../support/poll';
import { apiClient } from '../support/http';
import { checkInvariants } from '../support/invariants';
import { spawnService, type ServiceProcess } from '../support/processes';
import { startTestStack, type TestStack } from '../support/stack';
import { scripted } from '../support/tool-turns';
import { TestWsClient } from '../support/ws-client';

const HEARTBEAT_MS = 400;
const MAX_FRAME_BYTES = 64 * 1024;

/**
 * docs/RELIABILITY.md cases 20 (frames over the limit, floods), 23 (a client that stops reading) and
 * 24 (a peer that vanishes without closing), against real sockets.
 */
describe('websocket abuse', () => {
  let stack: TestStack;
  let apiKey: string;
  let api: ReturnType<typeof apiClient>;
  const clients: TestWsClient[] = [];
  const services: ServiceProcess[] = [];

  beforeAll(async () => {
    stack = await startTestStack({ workers: 0, env: { WS_HEARTBEAT_MS: String(HEARTBEAT_MS) } });
    // The turns run in a worker process with a scripted model of its own (LLM_BASE_URL unset):
    // a fast stream keeps its process busy, and the clients here must read at their own pace.
    services.push(await spawnService('worker', stack.childEnv({ LLM_BASE_URL: '' })));
    apiKey = (await stack.createUser('client')).apiKey;
    api = apiClient(stack.url, apiKey);
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    for (const service of services) await service.kill('SIGKILL');
    await stack.close();
  });

  const connect = async (baseUrl = stack.url) => {
    const client = await TestWsClient.connect(baseUrl, { apiKey });
    clients.push(client);
    return client;
  };
  const subscribe = async (client: TestWsClient, conversationId: string, after?: number) => {
    client.send({ type: 'subscribe', conversationId, ...(after === undefined ? {} : { after }) });
    await client.waitFor((frame) => frame.type === 'subscribed' && frame.conversationId === conversationId);
  };
  const newConversation = async () => (await api.post('/v1/conversations', {})).body.id as string;
  const postTurn = async (conversationId: string, scenario: unknown) => {
    const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content: `go ${scripted(scenario)}` });
    expect(posted.status).toBe(202);
    return posted.body.turnId as string;
  };
  const count = (client: TestWsClient, predicate: (frame: any) => boolean) => client.frames.filter(predicate).length;
  const expectConsecutive = (events: { seq: number }[], from: number) => {
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => from + index));
  };

  it('answers a frame at the size limit with an error frame, and closes one a byte over it with 1009', async () => {
    expect(stack.config.WS_MAX_FRAME_BYTES).toBe(MAX_FRAME_BYTES);
    const frameOf = (bytes: number) => `{"type":"ping","pad":"${'x'.repeat(bytes - '{"type":"ping","pad":""}'.length)}"}`;
    const client = await connect();
    const atLimit = frameOf(MAX_FRAME_BYTES);
    expect(Buffer.byteLength(atLimit)).toBe(MAX_FRAME_BYTES);
    client.send(atLimit);
    expect(await client.waitFor((frame) => frame.type === 'error')).toMatchObject({ code: 'bad_frame' });
    client.send({ type: 'ping' });
    await client.waitFor((frame) => frame.type === 'pong');

    client.socket.on('error', () => undefined);
    client.send(frameOf(MAX_FRAME_BYTES + 1));
    expect((await client.whenClosed()).code).toBe(1009);
  });

  it('rate-limits a flood of frames with rate_limited errors; the connection survives and its neighbours are unaffected', async () => {
    const conversationId = await newConversation();
    const flooder = await connect();
    const neighbour = await connect();
    await subscribe(flooder, conversationId);
    await subscribe(neighbour, conversationId);

    const FLOOD = 2000;
    for (let i = 0; i < FLOOD; i++) flooder.send({ type: 'ping' });
    const limited = await flooder.waitFor((frame) => frame.type === 'error');
    expect(limited).toMatchObject({ code: 'rate_limited' });
    // The neighbour has a budget of its own, spent on nothing of the flooder's.
    for (let i = 0; i < 20; i++) neighbour.send({ type: 'ping' });
    await neighbour.waitFor(() => count(neighbour, (frame) => frame.type === 'pong') === 20);

    // Paced to outlast the limiter's 100 ms window, so that the ping after it is admitted
    // whatever the machine's speed (the flood spent the window and the burst).
    const turnId = await postTurn(conversationId, { text: 'every word still arrives at both ends of this', tokenDelayMs: 25 });
    const seen = await neighbour.waitForTurnEnd(turnId);
    expect(await flooder.waitForTurnEnd(turnId)).toEqual(seen);
    expect(seen.at(-1)).toMatchObject({ type: 'turn-finish' });

    // Frames are handled in order: once this ping is answered, the whole flood was handled.
    const pongsOfFlood = count(flooder, (frame) => frame.type === 'pong');
    flooder.send({ type: 'ping' });
    await flooder.waitFor(() => count(flooder, (frame) => frame.type === 'pong') === pongsOfFlood + 1);
    // The burst (100) and what refilled meanwhile were served; the rest was dropped, with one
    // error a second at most rather than one per frame.
    expect(pongsOfFlood).toBeGreaterThanOrEqual(100);
    expect(pongsOfFlood).toBeLessThan(200);
    expect(count(flooder, (frame) => frame.type === 'error')).toBe(1);
    expect(flooder.closed).toBeUndefined();
    expect(neighbour.frames.filter((frame) => frame.type === 'error')).toEqual([]);
    await checkInvariants(stack.resources.db, { turnIds: [turnId], toolExecutions: [] }).then((statuses) => expect(statuses[turnId]).toBe('completed'));
  });

  it('drops a peer that stops answering pings within two heartbeats, releases its subscription and keeps a healthy one', async () => {
    const conversationId = await newConversation();
    const healthy = await connect();
    let pings = 0;
    const thirdPing = new Promise<void>((resolve) =>
      healthy.socket.on('ping', () => {
        if (++pings === 3) resolve();
      }),
    );
    const channel = stack.resources.eventLog.channel(conversationId);
    const subscribers = async () => Number(((await stack.resources.redis.pubsub('NUMSUB', channel)) as [string, number])[1]);

    // A peer that subscribed, then went silent: its TCP stack still acknowledges and it still
    // reads, but nothing answers a ping (it never sends a pong, nor a close).
    const silent = await TestWsClient.connect(stack.url, { apiKey }, { autoPong: false });
    clients.push(silent);
    let silentPings = 0;
    // Heartbeats counted, not timed: a busy process runs its timers late, but not out of order.
    const droppedOrPingedThrice = new Promise<void>((resolve) => {
      silent.socket.on('ping', () => {
        if (++silentPings === 3) resolve();
      });
      void silent.whenClosed().then(() => resolve());
    });
    await subscribe(silent, conversationId);
    expect(await subscribers()).toBe(1);

    // Events keep flowing to the healthy client while the silent one is being given up on.
    await subscribe(healthy, conversationId);
    const turnId = await postTurn(conversationId, { text: 'still talking to the ones who listen', tokenDelayMs: 10 });
    await droppedOrPingedThrice;
    // Dropped by the heartbeat (the server never sent a close) after one or two unanswered pings.
    expect(silent.closed).toMatchObject({ code: 1006 });
    expect(silentPings).toBeGreaterThanOrEqual(1);
    expect(silentPings).toBeLessThanOrEqual(2);

    const events = await healthy.waitForTurnEnd(turnId);
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish' });
    expectConsecutive(events, 1);
    // The healthy client answered every ping and is still here, several heartbeats on.
    await thirdPing;
    expect(healthy.closed).toBeUndefined();
    healthy.send({ type: 'ping' });
    await healthy.waitFor((frame) => frame.type === 'pong');
    // The dropped peer's subscription was released: only the healthy client's listens now.
    healthy.send({ type: 'unsubscribe', conversationId });
    await healthy.waitFor((frame) => frame.type === 'unsubscribed');
    await poll('the channel kept a subscriber', async () => (await subscribers()) === 0, 2000, 20);
    await checkInvariants(stack.resources.db, { turnIds: [turnId], toolExecutions: [] }).then((statuses) => expect(statuses[turnId]).toBe('completed'));
  });

  it('disconnects a client that stops reading with 1013; it resumes by seq with no gap and no duplicate, and the others are unaffected', async () => {
    // A gateway of its own, whose log says when it gave up on the client; pings are kept out of
    // the way (the paused client could not answer them either).
    const gateway = await spawnService('api', stack.childEnv({ WS_MAX_BUFFERED_BYTES: String(256 * 1024), WS_HEARTBEAT_MS: '60000' }));
    services.push(gateway);
    const conversationId = await newConversation();
    const stalled = await connect(gateway.url);
    const reader = await connect(gateway.url);
    await subscribe(stalled, conversationId);
    await subscribe(reader, conversationId);

    // It stops reading: the kernel's buffers fill (a few MB on loopback), then the gateway's.
    (stalled.socket as any)._socket.pause();
    const turnId = await postTurn(conversationId, { tokens: 1_000_000, chunkTokens: 200 });
    await gateway.waitForLog((entry) => entry.msg === 'websocket client too slow, disconnected');
    (stalled.socket as any)._socket.resume();
    expect((await stalled.whenClosed()).code).toBe(1013);
    const beforeCut = stalled.events();
    expect(beforeCut.length).toBeGreaterThan(0);
    expectConsecutive(beforeCut, 1);

    // It reconnects and resumes after the last seq it saw.
    const resumed = await connect(gateway.url);
    await subscribe(resumed, conversationId, beforeCut.at(-1)!.seq);
    const afterCut = await resumed.waitForTurnEnd(turnId);
    expectConsecutive(afterCut, beforeCut.at(-1)!.seq + 1);

    const all = await reader.waitForTurnEnd(turnId);
    expect(reader.closed).toBeUndefined();
    expect([...beforeCut, ...afterCut]).toEqual(all);
    expect(all.at(-1)).toMatchObject({ type: 'turn-finish' });
    const text = all
      .filter((event) => event.type === 'text-delta')
      .map((event) => event.delta)
      .join('');
    expect(text.length).toBeGreaterThan(4 * 1024 * 1024);
    const conversation = await api.get(`/v1/conversations/${conversationId}`);
    expect(conversation.body.messages.at(-1)).toMatchObject({ role: 'assistant', content: text });
    await checkInvariants(stack.resources.db, { turnIds: [turnId], toolExecutions: [] }).then((statuses) => expect(statuses[turnId]).toBe('completed'));
  });

  describe('subscriptions per connection (at most 100, conversations and batches together)', () => {
    const LIMIT = 100;
    const conversations: string[] = [];
    const subscriptionGauge = async (kind: 'conversation' | 'batch') => {
      const page = await (await fetch(`${stack.url}/metrics`)).text();
      return Number(new RegExp(`^switchyard_websocket_subscriptions\\{kind="${kind}"\\} (\\d+)$`, 'm').exec(page)?.[1]);
    };
    const submitBatch = async (message: string) => {
      const submitted = await api.post('/v1/batches', { items: [{ messages: [message] }] });
      expect(submitted.status).toBe(202);
      return submitted.body.batchId as string;
    };
    const subscribeBatch = async (client: TestWsClient, batchId: string) => {
      client.send({ type: 'subscribe', batchId });
      await client.waitFor((frame) => frame.type === 'subscribed' && frame.batchId === batchId);
    };
    /** Subscribes to each conversation in turn; the answer to the last one (subscribed or error). */
    const subscribeAll = async (client: TestWsClient, ids: string[]) => {
      let last: any;
      for (const conversationId of ids) {
        const sentAt = client.frames.length;
        client.send({ type: 'subscribe', conversationId });
        last = await client.waitFor((frame) => ['subscribed', 'error'].includes(frame.type) && frame.conversationId === conversationId && client.frames.indexOf(frame) >= sentAt);
      }
      return last;
    };

    beforeAll(async () => {
      conversations.push(...(await Promise.all(Array.from({ length: LIMIT }, () => newConversation()))));
    });

    it('counts a batch subscription against the limit with the conversation ones', async () => {
      // A batch that is still running when its subscription is counted.
      const batchId = await submitBatch(`slow ${scripted({ tokens: 100_000, tokenDelayMs: 20 })}`);
      const batchesBefore = await subscriptionGauge('batch');
      const client = await connect();
      await subscribeBatch(client, batchId);
      expect(await subscribeAll(client, conversations.slice(0, LIMIT - 1))).toMatchObject({ type: 'subscribed' });
      expect(await subscribeAll(client, conversations.slice(LIMIT - 1))).toMatchObject({
        type: 'error',
        code: 'too_many_subscriptions',
        conversationId: conversations[LIMIT - 1],
      });
      expect(await subscriptionGauge('batch')).toBe(batchesBefore + 1);
      // Ending the batch subscription makes room for the last conversation.
      client.send({ type: 'unsubscribe', batchId });
      await client.waitFor((frame) => frame.type === 'unsubscribed' && frame.batchId === batchId);
      expect(await subscribeAll(client, conversations.slice(LIMIT - 1))).toMatchObject({ type: 'subscribed' });
      expect(await subscriptionGauge('batch')).toBe(batchesBefore);
      expect((await api.post(`/v1/batches/${batchId}/cancel`)).status).toBe(200);
      client.close();
    });

    it('forgets a batch subscription once it sent batch-finish: it is no longer counted, nor against the limit', async () => {
      const batchId = await submitBatch(`quick ${scripted({ text: 'done' })}`);
      const watcher = await connect();
      await subscribeBatch(watcher, batchId);
      expect(await watcher.waitFor((frame) => frame.type === 'batch-finish', 60_000)).toMatchObject({ batchId, status: 'completed' });
      watcher.close();
      const batchesBefore = await subscriptionGauge('batch');

      // Subscribing to a batch that has already finished gives its progress and its end at once.
      const client = await connect();
      await subscribeBatch(client, batchId);
      expect(await client.waitFor((frame) => frame.type === 'batch-finish')).toMatchObject({ batchId, status: 'completed' });
      expect(await subscriptionGauge('batch')).toBe(batchesBefore);
      expect(await subscribeAll(client, conversations)).toMatchObject({ type: 'subscribed', conversationId: conversations[LIMIT - 1] });
      expect(client.frames.filter((frame) => frame.type === 'error')).toEqual([]);
      client.close();
    });
  });
});
