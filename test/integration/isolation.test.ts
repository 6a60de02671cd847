import { apiClient } from '../support/http';
import { startTestStack, type TestStack } from '../support/stack';
import { writeToolsDir } from '../support/tool-servers';
import { scripted } from '../support/tool-turns';
import { TestWsClient } from '../support/ws-client';

/** docs/RELIABILITY.md case 22: another user's conversation or turn is a 404 on every path, and leaks no event. */
describe('isolation between users', () => {
  let stack: TestStack;
  let aliceKey: string;
  let bobKey: string;
  let alice: ReturnType<typeof apiClient>;
  let bob: ReturnType<typeof apiClient>;
  const clients: TestWsClient[] = [];

  const connect = async (apiKey: string) => {
    const client = await TestWsClient.connect(stack.url, { apiKey });
    clients.push(client);
    return client;
  };
  /** Resolves once the server has handled every frame this client sent before (frames are handled in order). */
  const roundTrip = async (client: TestWsClient) => {
    const pongs = client.frames.filter((frame) => frame.type === 'pong').length;
    client.send({ type: 'ping' });
    await client.waitFor(() => client.frames.filter((frame) => frame.type === 'pong').length > pongs);
  };

  beforeAll(async () => {
    const toolsDir = await writeToolsDir({
      'ask-user.json': { kind: 'client', name: 'ask_user', description: 'Asks the person at the keyboard', fields: [{ name: 'question', required: true }] },
    });
    stack = await startTestStack({ env: { TOOLS_DIR: toolsDir } });
    aliceKey = (await stack.createUser('alice')).apiKey;
    bobKey = (await stack.createUser('bob')).apiKey;
    alice = apiClient(stack.url, aliceKey);
    bob = apiClient(stack.url, bobKey);
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await stack.close();
  });

  it("gives user B a 404 for everything of user A's, changes nothing of A's and sends B none of A's events", async () => {
    const aliceConversation = (await alice.post('/v1/conversations', { title: 'private', externalId: 'chat-1' })).body.id as string;
    const bobConversation = (await bob.post('/v1/conversations', { title: 'mine' })).body.id as string;
    const aliceClient = await connect(aliceKey);
    aliceClient.send({ type: 'subscribe', conversationId: aliceConversation });
    await aliceClient.waitFor((frame) => frame.type === 'subscribed');
    // Bob watches his own conversation all along: whatever reaches his connection is visible here.
    const bobClient = await connect(bobKey);
    bobClient.send({ type: 'subscribe', conversationId: bobConversation });
    await bobClient.waitFor((frame) => frame.type === 'subscribed');

    // Alice's turn waits on a client tool, so that Bob has a live turn, a pending call and a
    // growing event log to aim at.
    const posted = await alice.post(`/v1/conversations/${aliceConversation}/turns`, {
      content: `secret plans ${scripted({ steps: [{ toolCalls: [{ name: 'ask_user', arguments: { question: 'launch?' } }] }, { text: 'launched' }] })}`,
    });
    expect(posted.status).toBe(202);
    const turnId = posted.body.turnId as string;
    const request = await aliceClient.waitFor((frame) => frame.type === 'event' && frame.event.type === 'tool-call-request');
    const toolCallId = request.event.toolCallId as string;
    await aliceClient.waitFor((frame) => frame.type === 'event' && frame.event.type === 'turn-waiting');
    const aliceSeqBefore = (await alice.get(`/v1/conversations/${aliceConversation}`)).body.lastSeq as number;
    expect(aliceSeqBefore).toBeGreaterThan(3);

    // Reads: exactly what a missing id answers.
    const missingConversation = await bob.get('/v1/conversations/conv_00000000-0000-0000-0000-000000000000');
    const missingTurn = await bob.get('/v1/turns/turn_00000000-0000-0000-0000-000000000000');
    for (const path of [`/v1/conversations/${aliceConversation}`]) {
      const answer = await bob.get(path);
      expect([answer.status, answer.body]).toEqual([404, missingConversation.body]);
    }
    for (const path of [`/v1/turns/${turnId}`, `/v1/turns/${turnId}/events`]) {
      const answer = await bob.get(path);
      expect([answer.status, answer.body]).toEqual([404, missingTurn.body]);
    }
    expect((await bob.get('/v1/conversations')).body.data.map((each: any) => each.id)).toEqual([bobConversation]);
    expect((await bob.get('/v1/conversations?externalId=chat-1')).body.data).toEqual([]);
    // Resuming: SSE with Last-Event-ID (header or query) and a websocket with `after`, also
    // with a cursor beyond the log, which must not answer bad_cursor and so reveal the conversation.
    const resumed = await bob.request('GET', `/v1/turns/${turnId}/events`, undefined, { 'last-event-id': '1' });
    expect([resumed.status, resumed.body]).toEqual([404, missingTurn.body]);
    expect((await bob.get(`/v1/turns/${turnId}/events?lastEventId=1`)).status).toBe(404);
    for (const after of [undefined, 0, 2, 1_000_000]) {
      bobClient.send({ type: 'subscribe', conversationId: aliceConversation, ...(after === undefined ? {} : { after }) });
    }
    // Writes: a turn (every onBusy, interrupt included), a client-tool answer over HTTP and over
    // the websocket, a cancel.
    for (const onBusy of ['reject', 'enqueue', 'interrupt']) {
      const answer = await bob.post(`/v1/conversations/${aliceConversation}/turns`, { content: 'mine now', onBusy });
      expect([answer.status, answer.body]).toEqual([404, missingConversation.body]);
    }
    const answered = await bob.post(`/v1/turns/${turnId}/tool-results`, { toolCallId, result: 'yes, launch' });
    expect([answered.status, answered.body.error.code]).toEqual([404, 'not_found']);
    bobClient.send({ type: 'tool-result', turnId, toolCallId, result: 'yes, launch' });
    const cancelled = await bob.post(`/v1/turns/${turnId}/cancel`);
    expect([cancelled.status, cancelled.body]).toEqual([404, missingTurn.body]);
    await roundTrip(bobClient);

    const errors = bobClient.frames.filter((frame) => frame.type === 'error');
    expect(errors.map((frame) => [frame.code, frame.conversationId ?? null])).toEqual([
      ['not_found', aliceConversation],
      ['not_found', aliceConversation],
      ['not_found', aliceConversation],
      ['not_found', aliceConversation],
      ['not_found', null],
    ]);
    expect(bobClient.frames.filter((frame) => frame.type === 'subscribed').map((frame) => frame.conversationId)).toEqual([bobConversation]);
    expect(bobClient.events()).toEqual([]);

    // Nothing of Alice's moved: no event, no answer, no cancel, no second turn.
    expect((await alice.get(`/v1/conversations/${aliceConversation}`)).body.lastSeq).toBe(aliceSeqBefore);
    const waiting = await alice.get(`/v1/turns/${turnId}`);
    expect(waiting.body).toMatchObject({ status: 'waiting_tools' });
    expect(waiting.body.toolCalls).toEqual([expect.objectContaining({ toolCallId, status: expect.not.stringMatching(/succeeded|failed/) })]);
    const { rows } = await stack.resources.db.query<{ user_id: string; n: string }>('SELECT user_id, count(*) AS n FROM turns GROUP BY user_id');
    expect(rows.map((row) => Number(row.n))).toEqual([1]);

    // Alice's own answer still goes through, and her turn ends with her data only.
    expect((await alice.post(`/v1/turns/${turnId}/tool-results`, { toolCallId, result: 'not yet' })).body).toEqual({ accepted: true });
    const events = await aliceClient.waitForTurnEnd(turnId);
    expect(events.at(-1)).toMatchObject({ type: 'turn-finish' });
    expect(events.filter((event) => event.type === 'tool-result').map((event) => event.result)).toEqual(['not yet']);
    expect(events.map((event) => event.seq)).toEqual(events.map((_, index) => index + 1));
    await roundTrip(bobClient);
    expect(bobClient.events()).toEqual([]);

    // Alice resumes where she likes: the route works, it just is not Bob's.
    const text = await (await fetch(`${stack.url}/v1/turns/${turnId}/events`, { headers: { authorization: `Bearer ${aliceKey}`, 'last-event-id': '3' } })).text();
    const ids = [...text.matchAll(/^id: (\d+)$/gm)].map((match) => Number(match[1]));
    expect(ids).toEqual(events.filter((event) => event.seq > 3).map((event) => event.seq));
  });
});
