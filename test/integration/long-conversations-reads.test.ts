import { randomBytes } from 'node:crypto';
import { apiClient } from '../support/http';
import { scripted } from '../support/scripted';
import { TEST_POSTGRES_URL } from '../support/services';
import { startTestStack, type TestStack } from '../support/stack';
import { startPostgresProxy, type TcpProxy } from '../support/tcp-proxy';
import { TestWsClient } from '../support/ws-client';

/**
 * docs/guides/long-conversations.md: a step of a compacted conversation reads its history from
 * the summary on. Watched on the wire: PostgreSQL's replies to the stack, through a proxy, must
 * not carry the messages the summary stands in for, whatever query would have read them.
 */
describe('long conversations: what a compacted step reads', () => {
  let proxy: TcpProxy;
  let stack: TestStack;
  let api: ReturnType<typeof apiClient>;
  let apiKey: string;
  let client: TestWsClient | undefined;

  beforeAll(async () => {
    proxy = await startPostgresProxy(TEST_POSTGRES_URL);
    stack = await startTestStack({ env: { DATABASE_URL: proxy.urlFor(TEST_POSTGRES_URL) } });
    apiKey = (await stack.createUser('reads')).apiKey;
    api = apiClient(stack.url, apiKey);
  });
  afterAll(async () => {
    client?.close();
    await stack.close();
    await proxy.close();
  });

  it('reads no message the latest summary covers, in any step of a later turn', async () => {
    const created = await api.post('/v1/conversations', { system: 'Be brief.', tools: ['calculator'], compaction: { triggerTokens: 500, keepRecentTokens: 100 } });
    expect(created.status).toBe(201);
    const id = created.body.id as string;
    client = await TestWsClient.subscribed(stack.url, { apiKey }, id);
    const turn = async (content: string) => {
      const posted = await api.post(`/v1/conversations/${id}/turns`, { content });
      expect(posted.status).toBe(202);
      const events = (await client!.waitForTurnEnd(posted.body.turnId)).filter((event) => event.turnId === posted.body.turnId);
      expect(events.at(-1)).toMatchObject({ type: 'turn-finish' });
      return events;
    };
    // Each marker past the 40 characters the scripted summary quotes of a user line: only the messages hold it.
    const markers = [randomBytes(12).toString('hex'), randomBytes(12).toString('hex')];
    for (const marker of markers) await turn(`${scripted({ tokens: 300 })} ${'filler '.repeat(10)}${marker}`);
    expect((await turn('and now?')).map((event) => event.type)).toContain('compaction-finish');
    const stored = (await api.get(`/v1/conversations/${id}`)).body;
    expect(stored.compactions).toHaveLength(1);
    expect(stored.compactions[0].upToMessageId).toBe(stored.messages[3].id);

    const watches = markers.map((marker) => proxy.watchReplies(marker));
    // Two steps: the first read as the attempt begins, the second after the tool phase.
    const text = `${randomBytes(4).toString('hex')} ${scripted({ steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] }, { text: 'It is 2.' }] })}`;
    const events = await turn(text);
    expect(events.filter((event) => event.type === 'step-start')).toHaveLength(2);
    expect(events.map((event) => event.type)).not.toContain('compaction-start');
    const read = watches.map((watch) => watch.seen());
    for (const watch of watches) watch.stop();
    expect(read).toEqual([false, false]);

    // The same requests as from the whole history: the summary, then what follows it.
    const requests = stack.scripted.requests
      .map((request) => (request.body as any).messages as any[])
      .filter((messages) => messages.some((message) => message.role === 'user' && message.content === text));
    expect(requests.map((messages) => messages.map((message) => message.role))).toEqual([
      ['system', 'user', 'assistant', 'user'],
      ['system', 'user', 'assistant', 'user', 'assistant', 'tool'],
    ]);
    expect(requests[0]![0].content).toContain(stored.compactions[0].summary);

    // The watch sees what is read: the conversation's listing holds every message.
    const control = proxy.watchReplies(markers[0]!);
    await api.get(`/v1/conversations/${id}`);
    expect(control.seen()).toBe(true);
    control.stop();
  });
});
