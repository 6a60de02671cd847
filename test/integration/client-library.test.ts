import WebSocket from 'ws';
import {
  SwitchyardClient,
  type SwitchyardClientOptions,
  type Subscription,
  type SwitchyardEvent,
  type TurnView,
  type WebSocketConstructor,
  type WebSocketLike,
} from '@switchyard/client';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy';
import { scripted, startToolTurnHarness, type ToolTurnHarness } from '../support/tool-turns';

const toolFiles = { 'ask.json': { kind: 'client', name: 'ask_user', description: 'Asks the user', timeoutMs: 20_000 } };

/** The client library (packages/client) against the real gateway: what browsers and the CLI use. */
describe('client library', () => {
  let harness: ToolTurnHarness;
  let proxy: TcpProxy;
  const clients: SwitchyardClient[] = [];
  const newClient = (options: Partial<SwitchyardClientOptions> = {}) => {
    const client = new SwitchyardClient({ baseUrl: harness.stack.url, token: harness.apiKey, WebSocket, ...options });
    clients.push(client);
    return client;
  };

  /**
   * Short turns until the server no longer keeps the conversation's first events. A count of events is
   * not enough: deltas merge under load, and trimming works on whole stream nodes.
   */
  const pushOutFirstEvents = async (client: SwitchyardClient, view: Subscription, conversationId: string) => {
    for (let turns = 0; turns < 200; turns++) {
      const { turnId } = await client.sendTurn(conversationId, scripted({ tokens: 2 }));
      await view.followTurn(turnId);
      const resumed = await fetch(`${harness.stack.url}/v1/turns/${turnId}/events`, { headers: { authorization: `Bearer ${harness.apiKey}`, 'last-event-id': '1' } });
      if ((await resumed.text()).includes('cursor_expired')) return;
    }
    throw new Error('the event log still keeps the first events after 200 turns');
  };

  beforeAll(async () => {
    harness = await startToolTurnHarness({ toolFiles, env: { EVENT_LOG_MAX_LENGTH: '40', APPROVAL_REQUIRED_TOOLS: 'random_number' } });
    proxy = await startTcpProxy({ host: '127.0.0.1', port: Number(new URL(harness.stack.url).port) });
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await proxy.close();
    await harness.close();
  });

  it('sends a turn and follows it to a view of its text and parallel tool calls', async () => {
    const client = newClient();
    const conversation = await client.createConversation();
    const subscription = client.subscribe(conversation.id);
    await subscription.ready;
    const scenario = {
      steps: [
        {
          text: 'Adding.',
          toolCalls: [
            { name: 'calculator', arguments: { expression: '2+2' } },
            { name: 'calculator', arguments: { expression: '3*3' } },
          ],
        },
        { text: ' 4 and 9.' },
      ],
    };
    const { turnId } = await client.sendTurn(conversation.id, scripted(scenario));
    const views: string[] = [];
    const view = await subscription.followTurn(turnId, (each) => views.push(each.status));
    expect(view).toMatchObject({ status: 'completed', finishReason: 'stop', text: 'Adding. 4 and 9.' });
    expect(Object.values(view.toolCalls)).toEqual([
      expect.objectContaining({ toolName: 'calculator', status: 'succeeded', args: { expression: '2+2' }, result: expect.objectContaining({ result: 4 }), attempts: 1 }),
      expect.objectContaining({ toolName: 'calculator', status: 'succeeded', args: { expression: '3*3' }, result: expect.objectContaining({ result: 9 }) }),
    ]);
    expect(views).toContain('running-tools');

    // Per-turn iteration replays what was seen, then ends after the turn's last event.
    const types: string[] = [];
    for await (const event of subscription.turn(turnId)) types.push(event.type);
    expect(types[0]).toBe('turn-start');
    expect(types.at(-1)).toBe('turn-finish');
  });

  it('passes over an event type it does not know, counting its seq: the turn is followed to its end on one subscription', async () => {
    const subscribes: unknown[] = [];
    /** The real gateway with `step-finish` renamed on the way in: what a newer server's event type looks like to this client. */
    class NewerServerSocket implements WebSocketLike {
      onopen: WebSocketLike['onopen'] = null;
      onmessage: WebSocketLike['onmessage'] = null;
      onclose: WebSocketLike['onclose'] = null;
      onerror: WebSocketLike['onerror'] = null;
      private readonly socket: WebSocket;
      constructor(url: string) {
        this.socket = new WebSocket(url);
        this.socket.onopen = (event) => this.onopen?.(event);
        this.socket.onclose = (event) => this.onclose?.(event);
        this.socket.onerror = (event) => this.onerror?.(event);
        this.socket.onmessage = (event) => this.onmessage?.({ data: String(event.data).replaceAll('"type":"step-finish"', '"type":"step-summary"') });
      }
      get readyState() {
        return this.socket.readyState;
      }
      send(data: string) {
        const frame = JSON.parse(data) as { type: string };
        if (frame.type === 'subscribe') subscribes.push(frame);
        this.socket.send(data);
      }
      close(code?: number, reason?: string) {
        this.socket.close(code, reason);
      }
    }
    const client = newClient({ WebSocket: NewerServerSocket });
    const conversation = await client.createConversation();
    const subscription = client.subscribe(conversation.id);
    await subscription.ready;
    const { turnId } = await client.sendTurn(
      conversation.id,
      scripted({ steps: [{ text: 'Adding.', toolCalls: [{ name: 'calculator', arguments: { expression: '2+2' } }] }, { text: ' 4.' }] }),
    );
    const view = await subscription.followTurn(turnId);
    expect(view).toMatchObject({ status: 'completed', text: 'Adding. 4.' });
    // Without passing over, each renamed event looked like a gap before the next: a resubscription, the same event again, for ever.
    expect(subscribes).toHaveLength(1);
  });

  it('compacts a conversation on request and shows the compaction in the turn view', async () => {
    const client = newClient();
    const conversation = await client.createConversation({ compaction: { triggerTokens: 100_000, keepRecentTokens: 10 } });
    const subscription = client.subscribe(conversation.id);
    await subscription.ready;
    await subscription.followTurn((await client.sendTurn(conversation.id, scripted({ tokens: 100 }))).turnId);
    await subscription.followTurn((await client.sendTurn(conversation.id, 'and then?')).turnId);
    const view = await subscription.followTurn((await client.compactConversation(conversation.id)).turnId);
    expect(view).toMatchObject({ status: 'completed', finishReason: 'compacted', compactions: [{ status: 'done' }] });
    const stored = await client.getConversation(conversation.id);
    expect(stored.compactions).toEqual([expect.objectContaining({ upToMessageId: stored.messages[1]!.id, tokensBefore: view.compactions[0]!.tokensBefore })]);
  });

  it('regenerates, edits and forks, and reads the path (or every message) of a conversation', async () => {
    const client = newClient();
    const conversation = await client.createConversation();
    const subscription = client.subscribe(conversation.id);
    await subscription.ready;
    const question = scripted({ attempts: [{ text: 'first try' }, { text: 'second try' }] });
    await subscription.followTurn((await client.sendTurn(conversation.id, question)).turnId);

    const regenerated = await subscription.followTurn((await client.regenerate(conversation.id)).turnId);
    expect(regenerated).toMatchObject({ status: 'completed', text: 'second try' });
    const path = (await client.getConversation(conversation.id)).messages;
    expect(path.map((message) => message.content)).toEqual([question, 'second try']);
    const all = (await client.getConversation(conversation.id, { includeSuperseded: true })).messages;
    expect(all.map((message) => [message.content, message.supersededBy])).toEqual([
      [question, undefined],
      ['first try', regenerated.turnId],
      ['second try', undefined],
    ]);

    const edited = await subscription.followTurn((await client.editMessage(conversation.id, path[0]!.id, scripted({ text: 'edited' }))).turnId);
    expect(edited).toMatchObject({ status: 'completed', text: 'edited' });
    const editedPath = (await client.getConversation(conversation.id)).messages;
    expect(editedPath.map((message) => message.content)).toEqual([scripted({ text: 'edited' }), 'edited']);

    const fork = await client.forkConversation(conversation.id, editedPath[0]!.id);
    expect(fork.forkedFrom).toEqual({ conversationId: conversation.id, messageId: editedPath[0]!.id });
    expect((await client.getConversation(fork.id)).messages.map((message) => message.content)).toEqual([scripted({ text: 'edited' })]);
    await expect(client.editMessage(conversation.id, path[0]!.id, 'again')).rejects.toMatchObject({ status: 400, code: 'invalid_request' });
  });

  it('runs a client tool once when two subscribed clients both answer it: one answer accepted, the other acknowledged and ignored', async () => {
    const asked: string[] = [];
    let bothAsked = () => {};
    const barrier = new Promise<void>((resolve) => (bothAsked = resolve));
    // Each answers only once both were asked: two answers really race for the call.
    const answerAs = (name: string) => async () => {
      asked.push(name);
      if (asked.length === 2) bothAsked();
      await barrier;
      return { from: name };
    };
    const first = frameRecorder();
    const second = frameRecorder();
    const a = newClient({ WebSocket: first.WebSocket, onToolCall: answerAs('a') });
    const b = newClient({ WebSocket: second.WebSocket, onToolCall: answerAs('b') });
    const conversation = await a.createConversation();
    const subscriptionA = a.subscribe(conversation.id);
    const subscriptionB = b.subscribe(conversation.id);
    await Promise.all([subscriptionA.ready, subscriptionB.ready]);

    const marker = `two-answers-${Date.now()}`;
    const { turnId } = await a.sendTurn(conversation.id, `${marker} ${scripted({ steps: [{ toolCalls: [{ name: 'ask_user' }] }, { text: 'Thanks.' }] })}`);
    const view = await subscriptionA.followTurn(turnId);
    expect(view).toMatchObject({ status: 'completed', text: 'Thanks.' });
    expect([...asked].sort()).toEqual(['a', 'b']);

    const isAck = (frame: any) => frame.type === 'tool-result-ack' && frame.turnId === turnId;
    const acks = await Promise.all([first.waitFor(isAck), second.waitFor(isAck)]);
    expect(acks.map((ack) => ack.accepted).sort()).toEqual([false, true]);
    const winner = acks[0].accepted ? 'a' : 'b';
    const turn = await a.getTurn(turnId);
    expect(turn.toolCalls).toEqual([expect.objectContaining({ kind: 'client', status: 'succeeded', result: { from: winner } })]);
    expect(Object.values(view.toolCalls)).toEqual([expect.objectContaining({ status: 'succeeded', result: { from: winner } })]);
    // The model heard one answer, the accepted one.
    const requests = harness.providerRequests(marker);
    expect(requests).toHaveLength(2);
    const toolMessages = requests[1].messages.filter((message: any) => message.role === 'tool');
    expect(toolMessages).toHaveLength(1);
    expect(toolMessages[0].content).toContain(winner === 'a' ? '"a"' : '"b"');
    const results: SwitchyardEvent[] = [];
    for await (const event of subscriptionB.turn(turnId)) if (event.type === 'tool-result') results.push(event);
    expect(results).toHaveLength(1);
  });

  it('runs the client tool of every turn, though the model names each first call call_0 again', async () => {
    const asked: { turnId: string; toolCallId: string }[] = [];
    const client = newClient({ onToolCall: ({ turnId, toolCallId }) => (asked.push({ turnId, toolCallId }), { answer: asked.length }) });
    const conversation = await client.createConversation();
    const subscription = client.subscribe(conversation.id);
    await subscription.ready;
    const scenario = scripted({ steps: [{ toolCalls: [{ name: 'ask_user' }] }, { text: 'Thanks.' }] });
    const turnIds: string[] = [];
    for (const answer of [1, 2]) {
      const { turnId } = await client.sendTurn(conversation.id, scenario);
      turnIds.push(turnId);
      const view = await subscription.followTurn(turnId);
      expect(view).toMatchObject({ status: 'completed', text: 'Thanks.' });
      expect(Object.values(view.toolCalls)).toEqual([expect.objectContaining({ toolCallId: 'call_0', status: 'succeeded', result: { answer } })]);
    }
    expect(asked).toEqual(turnIds.map((turnId) => ({ turnId, toolCallId: 'call_0' })));
  }, 60_000);

  /** `fetch` that records each request to a path ending in `pathEnd` (its status, or `failed`), and brings the proxy back after a failure. */
  const fetchRestoringAfterFailure = (pathEnd: string, posts: (number | 'failed')[]) =>
    (async (input: any, init: any) => {
      const watched = String(input).endsWith(pathEnd);
      try {
        const response = await fetch(input, init);
        if (watched) posts.push(response.status);
        return response;
      } catch (error) {
        if (watched) (posts.push('failed'), proxy.restore());
        throw error;
      }
    }) as typeof fetch;

  it('runs a client tool once when a client drops between the request and its answer: its answer after the reconnect is acknowledged and ignored', async () => {
    const staying = frameRecorder();
    const dropping = frameRecorder();
    const droppingAsked: string[] = [];
    let reopened: Promise<void> = Promise.resolve();
    const isAck = (frame: any) => frame.type === 'tool-result-ack';
    const a = newClient({ WebSocket: staying.WebSocket, onToolCall: () => ({ from: 'a' }) });
    let onOpen = () => {};
    const b = newClient({
      baseUrl: `http://127.0.0.1:${proxy.port}`,
      WebSocket: dropping.WebSocket,
      reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
      onConnectionChange: (state) => state === 'open' && onOpen(),
      onToolCall: async (request) => {
        droppingAsked.push(request.toolCallId);
        reopened = new Promise<void>((resolve) => (onOpen = resolve));
        proxy.cut();
        // Away until the other client's answer was taken, then back, then its own answer.
        await staying.waitFor(isAck);
        proxy.restore();
        await reopened;
        return { from: 'b' };
      },
    });
    const conversation = await a.createConversation();
    const subscriptionA = a.subscribe(conversation.id);
    const subscriptionB = b.subscribe(conversation.id);
    await Promise.all([subscriptionA.ready, subscriptionB.ready]);

    const marker = `dropped-answer-${Date.now()}`;
    const { turnId } = await a.sendTurn(conversation.id, `${marker} ${scripted({ steps: [{ toolCalls: [{ name: 'ask_user' }] }, { text: 'Thanks.' }] })}`);
    expect(await subscriptionA.followTurn(turnId)).toMatchObject({ status: 'completed', text: 'Thanks.' });
    expect((await staying.waitFor(isAck)).accepted).toBe(true);
    expect((await dropping.waitFor(isAck)).accepted).toBe(false);
    expect(droppingAsked).toHaveLength(1);
    expect((await subscriptionB.followTurn(turnId)).toolCalls).toEqual({ [droppingAsked[0]!]: expect.objectContaining({ status: 'succeeded', result: { from: 'a' } }) });
    const requests = harness.providerRequests(marker);
    expect(requests).toHaveLength(2);
    expect(requests[1].messages.filter((message: any) => message.role === 'tool')).toHaveLength(1);
  });

  /**
   * A client tool answered as `from` over a connection cut just as the answer goes out; the turn
   * followed to its end must show that answer.
   */
  const answerLostOnce = async (from: string, options: { networkDown?: boolean; fetch?: typeof fetch } = {}) => {
    const cutting = cutOnFirstAnswer(proxy, options);
    const client = newClient({
      baseUrl: `http://127.0.0.1:${proxy.port}`,
      WebSocket: cutting.WebSocket,
      reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
      onToolCall: () => ({ from }),
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    const conversation = await client.createConversation();
    const subscription = client.subscribe(conversation.id);
    await subscription.ready;
    const { turnId } = await client.sendTurn(conversation.id, scripted({ steps: [{ toolCalls: [{ name: 'ask_user' }] }, { text: 'Thanks.' }] }));
    const view = await subscription.followTurn(turnId);
    expect(cutting.lostAnswers).toHaveLength(1);
    expect(view).toMatchObject({ status: 'completed', text: 'Thanks.' });
    expect(Object.values(view.toolCalls)).toEqual([expect.objectContaining({ status: 'succeeded', result: { from } })]);
  };

  it('answers a client tool again over HTTP when its connection drops before the answer was acknowledged: the answer is not lost', async () => {
    await answerLostOnce('c');
  });

  it('sends a client tool answer again until the server has it: the connection dropped with it and the HTTP fallback found the network down', async () => {
    const answerPosts: (number | 'failed')[] = [];
    // The HTTP fallback fails while the network is down; the network comes back after that.
    await answerLostOnce('d', { networkDown: true, fetch: fetchRestoringAfterFailure('/tool-results', answerPosts) });
    expect(answerPosts[0]).toBe('failed');
  });

  it('resolves an answer over the websocket with its acknowledgement', async () => {
    const client = newClient();
    const conversation = await client.createConversation();
    const subscription = client.subscribe(conversation.id);
    await subscription.ready;
    const { turnId } = await client.sendTurn(conversation.id, scripted({ steps: [{ toolCalls: [{ name: 'ask_user' }] }, { text: 'Thanks.' }] }));
    let request: any;
    for await (const event of subscription.turn(turnId)) {
      if (event.type !== 'turn-waiting') continue;
      request = event;
      break;
    }
    const [toolCallId] = request.toolCallIds;
    expect(await client.answerToolCall(turnId, toolCallId, { result: 'first' })).toEqual({ accepted: true });
    // Acknowledged means stored: the turn shows it at once.
    expect((await client.getTurn(turnId)).toolCalls).toEqual([expect.objectContaining({ toolCallId, status: 'succeeded', result: 'first' })]);
    expect(await client.answerToolCall(turnId, toolCallId, { result: 'second' })).toEqual({ accepted: false });
    expect(await subscription.followTurn(turnId)).toMatchObject({ status: 'completed', text: 'Thanks.' });
  });

  it('reconnects after the connection drops mid-stream and resumes from the last seq: no gap, no duplicate', async () => {
    const states: string[] = [];
    let reopenedTwice = () => {};
    const backAfterSecondCut = new Promise<void>((resolve) => (reopenedTwice = resolve));
    const client = newClient({
      baseUrl: `http://127.0.0.1:${proxy.port}`,
      reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
      onConnectionChange: (state) => {
        states.push(state);
        if (states.filter((each) => each === 'open').length === 3) reopenedTwice();
      },
      // The turn cannot end before the second cut: it waits for this answer, given only once the
      // client is back from that cut.
      onToolCall: async () => {
        await backAfterSecondCut;
        return 'go on';
      },
    });
    const conversation = await client.createConversation();
    const seqs: number[] = [];
    const subscription = client.subscribe(conversation.id, { onEvent: (event) => seqs.push(event.seq) });
    await subscription.ready;
    const words = (from: number) => Array.from({ length: 40 }, (_, i) => ` w${from + i}`).join('');
    const { turnId } = await client.sendTurn(
      conversation.id,
      scripted({
        steps: [
          { text: words(0), tokenDelayMs: 10, toolCalls: [{ name: 'ask_user' }] },
          { text: words(40), tokenDelayMs: 10 },
        ],
      }),
    );
    let cuts = 0;
    const cut = () => {
      cuts++;
      proxy.cut();
      setTimeout(() => proxy.restore(), 100);
    };
    const view = await subscription.followTurn(turnId, (each) => {
      // Mid-stream; the service keeps going while the client is away.
      if (each.text.length > 40 && cuts === 0) cut();
      // While the turn waits for the client; what follows the answer comes after the reconnect.
      if (each.status === 'waiting-for-client' && cuts === 1) cut();
    });
    expect(cuts).toBe(2);
    expect(view.text).toBe(words(0) + words(40));
    expect(seqs).toEqual(Array.from({ length: seqs.length }, (_, i) => seqs[0]! + i));
    expect(states.filter((state) => state === 'reconnecting').length).toBeGreaterThanOrEqual(2);
  });

  it('reports each reconnect once', async () => {
    const states: string[] = [];
    let reopened = () => {};
    const client = newClient({
      baseUrl: `http://127.0.0.1:${proxy.port}`,
      reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
      onConnectionChange: (state) => {
        states.push(state);
        if (states.filter((each) => each === 'open').length === 2) reopened();
      },
    });
    const conversation = await client.createConversation();
    const subscription = client.subscribe(conversation.id);
    await subscription.ready;
    // The connection drops, the network stays up: one reconnect brings it back.
    const back = new Promise<void>((resolve) => (reopened = resolve));
    proxy.cut();
    proxy.restore();
    await back;
    expect(states).toEqual(['connecting', 'open', 'reconnecting', 'open']);
  });

  it('rejects ready with a message of its own where there is no WebSocket implementation, and never connects', async () => {
    const global = globalThis as { WebSocket?: unknown };
    const globalWebSocket = global.WebSocket;
    delete global.WebSocket; // as on Node 20
    try {
      const states: string[] = [];
      const requests: string[] = [];
      const client = newClient({
        WebSocket: undefined,
        fetch: ((input: any, init: any) => (requests.push(String(input)), fetch(input, init))) as typeof fetch,
        onConnectionChange: (state) => states.push(state),
      });
      const subscription = client.subscribe('any-conversation');
      await expect(subscription.ready).rejects.toMatchObject({ code: 'no_websocket', message: expect.stringContaining('pass one as options.WebSocket') });
      expect(states).toEqual(['closed']);
      expect(requests).toEqual([]);
    } finally {
      if (globalWebSocket !== undefined) global.WebSocket = globalWebSocket;
    }
  });

  it('follows a turn whose subscription began in its middle, after its step-start and first text: the whole text', async () => {
    const writer = newClient();
    const conversation = await writer.createConversation();
    const watching = writer.subscribe(conversation.id);
    await watching.ready;
    const text = 'one two three four five six seven eight';
    const { turnId } = await writer.sendTurn(conversation.id, scripted({ text, tokenDelayMs: 5 }));
    expect((await watching.followTurn(turnId)).text).toBe(text);
    let firstText: SwitchyardEvent | undefined;
    for await (const event of watching.turn(turnId)) if (event.type === 'text-delta') firstText ??= event;
    expect(firstText!.type === 'text-delta' && text.startsWith(firstText!.delta) && firstText!.delta.length < text.length).toBe(true);

    const subscription = newClient().subscribe(conversation.id, { after: firstText!.seq });
    await subscription.ready;
    expect(await subscription.followTurn(turnId)).toMatchObject({ status: 'completed', text, steps: [expect.objectContaining({ step: 1, text })] });
  });

  it('reloads the conversation over HTTP when the server no longer keeps events after its cursor', async () => {
    const client = newClient();
    const conversation = await client.createConversation();
    const first = client.subscribe(conversation.id);
    await first.ready;
    await pushOutFirstEvents(client, first, conversation.id);
    first.close();

    const reloads: number[] = [];
    const resumed = newClient();
    const subscription = resumed.subscribe(conversation.id, { after: 1, onReload: (reloaded) => reloads.push(reloaded.lastSeq) });
    await subscription.ready;
    expect(reloads).toHaveLength(1);
    expect(subscription.lastSeq).toBe(reloads[0]);
    // It goes on live from there.
    const next = await resumed.sendTurn(conversation.id, scripted({ text: 'after the reload' }));
    expect((await subscription.followTurn(next.turnId)).text).toBe('after the reload');
  });

  it('runs a client tool still unanswered after a reload, though its request was among the events the reload skipped', async () => {
    const asker = newClient();
    const conversation = await asker.createConversation();
    const watching = asker.subscribe(conversation.id);
    await watching.ready;
    await pushOutFirstEvents(asker, watching, conversation.id);
    const { turnId } = await asker.sendTurn(conversation.id, scripted({ steps: [{ toolCalls: [{ name: 'ask_user' }] }, { text: 'Thanks.' }] }));
    for await (const event of watching.turn(turnId)) if (event.type === 'turn-waiting') break;

    const reloads: number[] = [];
    const answerer = newClient({ onToolCall: () => ({ from: 'after the reload' }) });
    const subscription = answerer.subscribe(conversation.id, { after: 1, onReload: (reloaded) => reloads.push(reloaded.lastSeq) });
    await subscription.ready;
    const view = await watching.followTurn(turnId);
    expect(reloads).toHaveLength(1);
    expect(view).toMatchObject({ status: 'completed', text: 'Thanks.' });
    expect(Object.values(view.toolCalls)).toEqual([expect.objectContaining({ status: 'succeeded', result: { from: 'after the reload' } })]);
  });

  const gatedTurn = scripted({ steps: [{ toolCalls: [{ name: 'random_number', arguments: { min: 1, max: 6 } }] }, { text: 'Rolled.' }] });

  it('asks onApprovalRequest once per gated call, shows it in the turn view, and decides it over the websocket with its acknowledgement', async () => {
    const recorder = frameRecorder();
    const asked: any[] = [];
    let onAsked = (_request: any) => {};
    const firstAsk = new Promise<any>((resolve) => (onAsked = resolve));
    const client = newClient({ WebSocket: recorder.WebSocket, onApprovalRequest: (request) => (asked.push(request), onAsked(request)) });
    const conversation = await client.createConversation();
    const subscription = client.subscribe(conversation.id);
    await subscription.ready;
    const { turnId } = await client.sendTurn(conversation.id, gatedTurn);
    let onParked = (_view: TurnView) => {};
    const parkedView = new Promise<TurnView>((resolve) => (onParked = resolve));
    const followed = subscription.followTurn(turnId, (view) => view.status === 'waiting-for-approval' && onParked(view));
    const request = await firstAsk;
    expect(request).toMatchObject({
      turnId,
      conversationId: conversation.id,
      toolName: 'random_number',
      args: { min: 1, max: 6 },
      approvalId: expect.any(String),
      expiresAt: expect.any(String),
    });
    const parked = await parkedView;
    expect(parked.toolCalls[request.toolCallId]).toMatchObject({ status: 'awaiting-approval', approval: { approvalId: request.approvalId, expiresAt: request.expiresAt } });

    const decision = await client.approve(turnId, request.toolCallId, true, 'fine');
    expect(decision).toMatchObject({ toolCallId: request.toolCallId, approved: true, reason: 'fine', decidedAt: expect.any(String) });
    expect(recorder.frames).toContainEqual(expect.objectContaining({ type: 'tool-approval-ack', turnId, toolCallId: request.toolCallId, approved: true }));
    // The same decision again answers the stored one; the opposite one is refused.
    expect(await client.approve(turnId, request.toolCallId, true, 'fine')).toEqual(decision);
    // Refused over the websocket as over HTTP: with the stored decision, so another device shows it.
    await expect(client.approve(turnId, request.toolCallId, false)).rejects.toMatchObject({ status: 409, code: 'already_decided', details: decision });
    expect(recorder.frames).toContainEqual(expect.objectContaining({ type: 'error', code: 'already_decided', toolCallId: request.toolCallId }));

    const view = await followed;
    expect(view).toMatchObject({ status: 'completed', text: 'Rolled.' });
    expect(view.toolCalls[request.toolCallId]).toMatchObject({ status: 'succeeded', approval: { approved: true, reason: 'fine' } });
    expect(asked).toHaveLength(1);
  });

  it('asks for an approval requested before the subscription, and sends the decision onApprovalRequest returns: denied, the call never runs', async () => {
    const starter = newClient();
    const conversation = await starter.createConversation();
    const watching = starter.subscribe(conversation.id);
    await watching.ready;
    const { turnId } = await starter.sendTurn(conversation.id, gatedTurn);
    let parkedAt = 0;
    for await (const event of watching.turn(turnId)) {
      if (event.type !== 'turn-waiting') continue;
      parkedAt = event.seq;
      break;
    }

    const asked: any[] = [];
    // Subscribed past the request: only the server's list of pending approvals has it.
    const decider = newClient({ onApprovalRequest: (request) => (asked.push(request), { approved: false, reason: 'not now' }) });
    const subscription = decider.subscribe(conversation.id, { after: parkedAt });
    await subscription.ready;
    const view = await watching.followTurn(turnId);
    expect(asked).toEqual([expect.objectContaining({ turnId, toolName: 'random_number' })]);
    expect(view).toMatchObject({ status: 'completed', text: 'Rolled.' });
    expect(Object.values(view.toolCalls)).toEqual([
      expect.objectContaining({
        status: 'failed',
        error: expect.objectContaining({ code: 'denied', message: 'not now' }),
        approval: expect.objectContaining({ approved: false, reason: 'not now' }),
      }),
    ]);
    expect((await decider.listPendingApprovals({ conversationId: conversation.id })).data).toEqual([]);
  });

  it('asks for a pending approval once after a reload that skipped its request (the reload and the first subscription both find it)', async () => {
    const starter = newClient();
    const conversation = await starter.createConversation();
    const watching = starter.subscribe(conversation.id);
    await watching.ready;
    await pushOutFirstEvents(starter, watching, conversation.id);
    const { turnId } = await starter.sendTurn(conversation.id, gatedTurn);
    for await (const event of watching.turn(turnId)) if (event.type === 'turn-waiting') break;

    const asked: any[] = [];
    const reloads: number[] = [];
    let onAsked = () => {};
    const wasAsked = new Promise<void>((resolve) => (onAsked = resolve));
    const decider = newClient({ onApprovalRequest: (request) => (asked.push(request), onAsked()) });
    const subscription = decider.subscribe(conversation.id, { after: 1, onReload: (reloaded) => reloads.push(reloaded.lastSeq) });
    await subscription.ready;
    await wasAsked;
    expect(reloads).toHaveLength(1);
    const [request] = asked;
    await decider.approve(turnId, request.toolCallId, true);
    expect(await watching.followTurn(turnId)).toMatchObject({ status: 'completed', text: 'Rolled.' });
    expect(asked).toHaveLength(1);
  });

  it('sends a decision again until the server has it: the connection is down and the first HTTP try finds no network', async () => {
    const starter = newClient();
    const conversation = await starter.createConversation();
    const watching = starter.subscribe(conversation.id);
    await watching.ready;
    const { turnId } = await starter.sendTurn(conversation.id, gatedTurn);
    let toolCallId = '';
    for await (const event of watching.turn(turnId)) {
      if (event.type === 'tool-approval-request') toolCallId = event.toolCallId;
      if (event.type === 'turn-waiting') break;
    }

    const decisionPosts: (number | 'failed')[] = [];
    // The network comes back after the first try failed.
    const decider = newClient({
      baseUrl: `http://127.0.0.1:${proxy.port}`,
      fetch: fetchRestoringAfterFailure('/approvals', decisionPosts),
      reconnect: { initialDelayMs: 20, maxDelayMs: 200 },
    });
    proxy.cut();
    const decision = await decider.approve(turnId, toolCallId, true, 'when the network is back');
    expect(decision).toMatchObject({ toolCallId, approved: true, reason: 'when the network is back' });
    expect(decisionPosts).toEqual(['failed', 200]);
    const view = await watching.followTurn(turnId);
    expect(view).toMatchObject({ status: 'completed', text: 'Rolled.' });
    expect(view.toolCalls[toolCallId]).toMatchObject({ status: 'succeeded', approval: { approved: true } });
  });

  it('works with a session token, cancels, and reports a conversation that is not ours', async () => {
    const { token } = (await harness.api.post('/v1/session-tokens', {})).body;
    const owner = newClient();
    const conversation = await owner.createConversation();
    const browser = newClient({ token });
    const subscription = browser.subscribe(conversation.id);
    await subscription.ready;
    const { turnId } = await owner.sendTurn(conversation.id, scripted({ tokens: 2_000, tokenDelayMs: 10 }));
    const following = subscription.followTurn(turnId, (view) => {
      if (view.text.length > 0 && view.status === 'running') void browser.cancelTurn(turnId);
    });
    expect((await following).status).toBe('cancelled');

    const stranger = newClient({ token: (await harness.stack.createUser('stranger')).apiKey });
    const refused = stranger.subscribe(conversation.id);
    await expect(refused.ready).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });
});

/** A WebSocket (the `ws` package's) that records every frame the client received, for a test to wait on. */
function frameRecorder(): { WebSocket: WebSocketConstructor; frames: any[]; waitFor(predicate: (frame: any) => boolean, timeoutMs?: number): Promise<any> } {
  const frames: any[] = [];
  const waiters = new Set<{ predicate: (frame: any) => boolean; resolve(frame: any): void }>();
  class RecordingWebSocket extends WebSocket {
    constructor(url: string) {
      super(url);
      this.addEventListener('message', (message) => {
        const frame = JSON.parse(String(message.data));
        frames.push(frame);
        for (const waiter of [...waiters]) if (waiter.predicate(frame)) (waiters.delete(waiter), waiter.resolve(frame));
      });
    }
  }
  return {
    WebSocket: RecordingWebSocket,
    frames,
    waitFor(predicate, timeoutMs = 20_000) {
      const seen = frames.find(predicate);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => (waiters.delete(waiter), reject(new Error(`no such frame; last: ${JSON.stringify(frames.slice(-3))}`))), timeoutMs);
        const waiter = { predicate, resolve: (frame: any) => (clearTimeout(timer), resolve(frame)) };
        waiters.add(waiter);
      });
    },
  };
}

/**
 * A WebSocket (the `ws` package's) whose first client-tool answer is lost: the connection is
 * cut under it just before the frame goes out, so the server never receives it. With
 * `networkDown`, the proxy stays cut (the test restores it).
 */
function cutOnFirstAnswer(proxy: TcpProxy, options: { networkDown?: boolean } = {}): { WebSocket: WebSocketConstructor; lostAnswers: string[] } {
  const lostAnswers: string[] = [];
  class CuttingWebSocket extends WebSocket {
    override send(data: any, ...rest: any[]): void {
      if (lostAnswers.length === 0 && JSON.parse(String(data)).type === 'tool-result') {
        lostAnswers.push(String(data));
        proxy.cut();
        if (!options.networkDown) proxy.restore();
      }
      (super.send as (...args: any[]) => void)(data, ...rest);
    }
  }
  return { WebSocket: CuttingWebSocket, lostAnswers };
}
