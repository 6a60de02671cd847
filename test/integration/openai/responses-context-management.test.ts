import { apiClient } from '../../support/http';
import { scripted } from '../../support/scripted';
import { startTestStack, type TestStack } from '../../support/stack';

/** docs/API.md, "OpenAI-compatible routes": `context_management` sets the compaction policy of the response's conversation. */
describe('Responses context_management', () => {
  let stack: TestStack;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    stack = await startTestStack();
    api = apiClient(stack.url, (await stack.createUser('responses-compaction')).apiKey);
  });
  afterAll(() => stack.close());

  const compactionOf = async (conversationId: string) => (await api.get(`/v1/conversations/${conversationId}`)).body.compaction;

  it('gives a new conversation the policy, changes it on a continued one, and refuses a threshold out of range', async () => {
    const first = await api.post('/openai/v1/responses', { input: scripted({ text: 'one' }), context_management: [{ type: 'compaction', compact_threshold: 500 }] });
    expect(first.status).toBe(200);
    const [conversation] = (await api.get('/v1/conversations?source=responses')).body.data;
    expect(await compactionOf(conversation.id)).toEqual({ triggerTokens: 500 });

    const second = await api.post('/openai/v1/responses', {
      input: scripted({ text: 'two' }),
      previous_response_id: first.body.id,
      context_management: [{ type: 'compaction', compact_threshold: 2000 }],
    });
    expect(second.status).toBe(200);
    expect(await compactionOf(conversation.id)).toEqual({ triggerTokens: 2000 });
    // A continuation without it keeps the policy.
    expect((await api.post('/openai/v1/responses', { input: scripted({ text: 'three' }), previous_response_id: second.body.id })).status).toBe(200);
    expect(await compactionOf(conversation.id)).toEqual({ triggerTokens: 2000 });

    const refused = await api.post('/openai/v1/responses', { input: 'hi', context_management: [{ type: 'compaction', compact_threshold: 1 }] });
    expect(refused.status).toBe(400);
  });
});
