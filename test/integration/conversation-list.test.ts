import { NodeChat } from '../support/ai-sdk-chat';
import { followBatchEvents } from '../support/batch-events';
import { apiClient } from '../support/http';
import { openAiClient } from '../support/openai-sdk';
import { startTestStack, type TestStack } from '../support/stack';
import { scripted } from '../support/tool-turns';

/** `GET /v1/conversations?batch=false|true`: a person's chats apart from the conversations batch items run in. */
describe('listing conversations with and without batch items', () => {
  let stack: TestStack;
  let apiKey: string;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    stack = await startTestStack();
    ({ apiKey } = await stack.createUser('lister'));
    api = apiClient(stack.url, apiKey);
  });
  afterAll(() => stack.close());

  const ids = (page: { data: { id: string }[] }) => page.data.map((conversation) => conversation.id);
  /** Every page of the list with `query`, `limit` at a time, following `nextCursor`. */
  async function everyPage(query: string, limit: number): Promise<{ id: string; externalId: string | null }[][]> {
    const pages = [];
    let cursor: string | null = null;
    do {
      const page: { status: number; body: any } = await api.get(`/v1/conversations?${query}&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.status).toBe(200);
      pages.push(page.body.data);
      cursor = page.body.nextCursor;
    } while (cursor);
    return pages;
  }

  it("lists a person's chats and REST conversations, newest first and paged, without the batch items made between them, earlier runs included", async () => {
    const rest = (await api.post('/v1/conversations', { title: 'over REST' })).body.id as string;
    const chat = new NodeChat({ url: stack.url, token: apiKey, id: 'chat-before-batch' });
    await chat.sendMessage({ text: scripted({ text: 'Hi.' }) });
    await chat.waitUntil((each) => each.status === 'ready' && each.messages.length === 2);

    // Items that fail once, so the retry makes a second conversation of each, of which batch_items keeps only the newest.
    const failsOnce = (i: number) => scripted({ attempts: [{ error: { status: 400, message: `refused ${i}` } }, { text: 'fine on retry' }] });
    const items = [{ messages: [failsOnce(0)] }, { messages: [scripted({ text: 'fine' })] }, { messages: [failsOnce(2)] }];
    const batch = (await api.post('/v1/batches', { items })).body;
    const finished = async () => {
      const progress = await followBatchEvents(stack.url, apiKey, batch.id);
      return progress.finished().finally(() => progress.close());
    };
    expect((await finished()).counts).toMatchObject({ succeeded: 1, failed: 2 });
    expect((await api.post(`/v1/batches/${batch.id}/retry`)).body).toMatchObject({ requeued: 2 });
    expect((await finished()).counts).toMatchObject({ succeeded: 3 });
    const after = (await api.post('/v1/conversations', { title: 'after the batch', externalId: 'chat-after-batch' })).body.id as string;

    const all = (await api.get('/v1/conversations?limit=100')).body;
    const chatId = all.data.find((conversation: { externalId: string | null }) => conversation.externalId === 'chat-before-batch').id;
    expect(all.data).toHaveLength(3 + 5);

    const own = await everyPage('batch=false', 2);
    expect(own.map((page) => page.map((conversation) => conversation.id))).toEqual([[after, chatId], [rest]]);

    const batchItems = await everyPage('batch=true', 100);
    expect(batchItems.flat()).toHaveLength(5);
    expect(batchItems.flat().every((conversation) => conversation.externalId?.startsWith(`batch:${batch.id}:`))).toBe(true);
    expect(ids((await api.get('/v1/conversations?batch=true&externalId=chat-after-batch')).body)).toEqual([]);
    expect(ids((await api.get('/v1/conversations?batch=false&externalId=chat-after-batch')).body)).toEqual([after]);
  });

  it('says where each conversation was made, and lists those of some sources only (?source=)', async () => {
    const user = await stack.createUser('sourcer');
    const own = apiClient(stack.url, user.apiKey);
    const rest = (await own.post('/v1/conversations', { title: 'over REST' })).body;
    expect(rest.source).toBe('api');
    const chat = new NodeChat({ url: stack.url, token: user.apiKey, id: 'chat-with-a-source' });
    await chat.sendMessage({ text: scripted({ text: 'Hi.' }) });
    await chat.waitUntil((each) => each.status === 'ready' && each.messages.length === 2);
    const openai = openAiClient(stack.url, user.apiKey);
    await openai.responses.create({ model: 'scripted', input: scripted({ text: 'A response.' }) });
    await openai.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: scripted({ text: 'A completion.' }) }] });
    const batch = (await own.post('/v1/batches', { items: [{ messages: [scripted({ text: 'An item.' })] }] })).body;
    const progress = await followBatchEvents(stack.url, user.apiKey, batch.id);
    await progress.finished().finally(() => progress.close());

    const all = (await own.get('/v1/conversations?limit=100')).body.data as { id: string; source: string; externalId: string | null }[];
    expect(all.map((conversation) => conversation.source)).toEqual(['batch', 'chat.completions', 'responses', 'chat', 'api']);
    const chatId = all.find((conversation) => conversation.externalId === 'chat-with-a-source')!.id;
    expect(ids((await own.get('/v1/conversations?source=chat,api')).body)).toEqual([chatId, rest.id]);
    expect(ids((await own.get('/v1/conversations?source=responses')).body)).toEqual([all[2]!.id]);
    expect(ids((await own.get('/v1/conversations?source=batch&batch=false')).body)).toEqual([]);
    expect((await own.get(`/v1/conversations/${chatId}`)).body.source).toBe('chat');

    const refused = await own.get('/v1/conversations?source=chat,openai');
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'invalid_request', details: [expect.objectContaining({ field: expect.stringMatching(/^source/) })] });
  });

  it('refuses a batch filter that is not true or false, naming the field', async () => {
    const refused = await api.get('/v1/conversations?batch=yes');
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'invalid_request', details: [expect.objectContaining({ field: 'batch' })] });
  });
});
