import { randomBytes } from 'node:crypto';
import { apiClient } from '../support/http';
import { scripted } from '../support/scripted';
import { startTestStack, type TestStack } from '../support/stack';
import { TestWsClient } from '../support/ws-client';

/** docs/API.md, "Long conversations": compaction before a step that would pass the trigger. */
describe('long conversations', () => {
  let stack: TestStack;
  let api: ReturnType<typeof apiClient>;
  let apiKey: string;
  const clients: TestWsClient[] = [];

  beforeAll(async () => {
    stack = await startTestStack();
    apiKey = (await stack.createUser('long')).apiKey;
    api = apiClient(stack.url, apiKey);
  });
  afterEach(() => stack.scripted.setFault(null));
  afterAll(async () => {
    for (const client of clients) client.close();
    await stack.close();
  });

  const POLICY = { triggerTokens: 500, keepRecentTokens: 100 };

  async function conversation(body: Record<string, unknown>) {
    const created = await api.post('/v1/conversations', { system: 'Be brief.', tools: ['calculator'], ...body });
    expect(created.status).toBe(201);
    const client = await TestWsClient.subscribed(stack.url, { apiKey }, created.body.id);
    clients.push(client);
    return { id: created.body.id as string, client };
  }

  /** Runs a turn to its end: its id, its events, and the text of its user message (unique, to find its requests by). */
  async function turn(chat: { id: string; client: TestWsClient }, content: string, body: Record<string, unknown> = {}) {
    const text = `${randomBytes(4).toString('hex')} ${content}`;
    const posted = await api.post(`/v1/conversations/${chat.id}/turns`, { content: text, ...body });
    expect(posted.status).toBe(202);
    const turnId = posted.body.turnId as string;
    const events = (await chat.client.waitForTurnEnd(turnId)).filter((event) => event.turnId === turnId);
    return { turnId, events, text };
  }

  /** The messages of every step request (not summary requests) whose last user message is `text`. */
  function stepRequests(text: string): any[][] {
    return stack.scripted.requests
      .map((request) => (request.body as any).messages as any[])
      .filter((messages) => messages.filter((message) => message.role === 'user').at(-1)?.content === text);
  }

  function summaryRequests(): any[][] {
    return stack.scripted.requests
      .map((request) => (request.body as any).messages as any[])
      .filter((messages) => /^<conversation-to-summarise>/.test(messages.at(-1)?.content ?? ''));
  }

  it("compacts a conversation on an agent with the agent's policy, the conversation itself having none", async () => {
    const agent = await api.post('/v1/agents', { name: `compacting-${randomBytes(4).toString('hex')}`, instructions: 'Agent prompt.', tools: ['calculator'], compaction: POLICY });
    expect(agent.status).toBe(201);
    const created = await api.post('/v1/conversations', { agent: agent.body.id });
    expect(created.body.compaction ?? null).toBeNull();
    const client = await TestWsClient.subscribed(stack.url, { apiKey }, created.body.id);
    clients.push(client);
    const chat = { id: created.body.id as string, client };
    await turn(chat, scripted({ tokens: 300 }));
    await turn(chat, scripted({ tokens: 300 }));
    const third = await turn(chat, 'and now?');
    expect(third.events.map((event) => event.type)).toEqual(expect.arrayContaining(['compaction-start', 'compaction-finish']));
    const [step] = stepRequests(third.text).slice(-1);
    expect(step![0].role).toBe('system');
    expect(step![0].content).toMatch(/^Agent prompt\./);
    expect(step![0].content.length).toBeGreaterThan('Agent prompt.'.length);
    expect((await api.get(`/v1/conversations/${chat.id}`)).body.compactions).toHaveLength(1);
  });

  it('summarises the earlier messages before a step past the trigger, then sends the system prompt with the summary and the tail', async () => {
    const chat = await conversation({ compaction: POLICY });
    const first = await turn(chat, scripted({ tokens: 300 }));
    const second = await turn(chat, scripted({ tokens: 300 }));
    expect([...first.events, ...second.events].map((event) => event.type)).not.toContain('compaction-start');

    const summariesBefore = summaryRequests().length;
    const third = await turn(chat, 'and now?');
    const types = third.events.map((event) => event.type);
    expect(types.indexOf('compaction-start')).toBeGreaterThanOrEqual(0);
    expect(types.indexOf('compaction-start')).toBeLessThan(types.indexOf('compaction-finish'));
    expect(types.indexOf('compaction-finish')).toBeLessThan(types.indexOf('step-start'));
    const finished = third.events.find((event) => event.type === 'compaction-finish');
    expect(finished.tokensBefore).toBeGreaterThan(POLICY.triggerTokens);
    expect(finished.tokensAfter).toBeLessThan(POLICY.triggerTokens);
    expect(third.events.at(-1)).toMatchObject({ type: 'turn-finish' });

    // The summary request got the transcript of the messages before the tail.
    expect(summaryRequests()).toHaveLength(summariesBefore + 1);
    const summaryRequest = summaryRequests().at(-1)!;
    expect(summaryRequest[1].content).toContain(first.text);
    expect(summaryRequest[1].content).toContain(second.text);
    expect(summaryRequest[1].content).not.toContain(third.text);

    // The step itself: one system message (prompt, then the summary), then the tail: the last user message.
    const [sent] = stepRequests(third.text);
    expect(sent).toHaveLength(2);
    expect(sent![0].role).toBe('system');
    expect(sent![0].content).toMatch(/^Be brief\.\n\nSummary of the conversation so far:\nSummary of 4 messages\./);
    expect(sent![1]).toEqual({ role: 'user', content: third.text });

    // Nothing stored changed; the compaction is listed beside the messages.
    const stored = (await api.get(`/v1/conversations/${chat.id}`)).body;
    expect(stored.messages).toHaveLength(6);
    expect(stored.compactions).toEqual([
      expect.objectContaining({ upToMessageId: stored.messages[3].id, tokensBefore: finished.tokensBefore, tokensAfter: finished.tokensAfter, turnId: third.turnId }),
    ]);
    expect(stored.compactions[0].summary).toMatch(/^Summary of 4 messages\./);

    // Its call is in the turn's provider calls and the ledger, and in the turn's usage.
    const detail = (await api.get(`/v1/turns/${third.turnId}`)).body;
    expect(detail.providerCalls.map((call: any) => call.kind)).toEqual(['compaction', 'step']);
    const sum = detail.providerCalls.reduce((total: number, call: any) => total + call.usage.totalTokens, 0);
    expect(detail.usage.totalTokens).toBe(sum);

    // The next turn sends the summary and what came after it; once that passes the trigger again, the new summary folds the old one in.
    const fourth = await turn(chat, 'go on');
    expect(stepRequests(fourth.text)[0]!.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'user']);
    let later = await turn(chat, scripted({ tokens: 300 }));
    for (let more = 0; more < 3 && !later.events.some((event) => event.type === 'compaction-finish'); more++) later = await turn(chat, scripted({ tokens: 300 }));
    expect(later.events.map((event) => event.type)).toContain('compaction-finish');
    expect(summaryRequests().at(-1)![1].content).toContain('[summary of what came before]\nSummary of 4 messages.');
    expect(summaryRequests().at(-1)![1].content).toContain(fourth.text);
    expect((await api.get(`/v1/conversations/${chat.id}`)).body.compactions).toHaveLength(2);
  });

  it('never starts the kept tail inside a tool exchange', async () => {
    const chat = await conversation({ compaction: { triggerTokens: 850, keepRecentTokens: 500 } });
    // A call made after a long text, its result short: a cut by tokens alone would open the tail at the tool message.
    const tools = await turn(chat, scripted({ steps: [{ tokens: 600, toolCalls: [{ name: 'calculator', arguments: { expression: '1+1' } }] }, { text: 'It is 2.' }] }));
    expect(tools.events.map((event) => event.type)).not.toContain('compaction-start');
    const next = await turn(chat, Array.from({ length: 300 }, () => 'ok').join(' '));
    expect(next.events.map((event) => event.type)).toContain('compaction-finish');
    const [sent] = stepRequests(next.text);
    expect(sent!.map((message) => message.role)).toEqual(['system', 'assistant', 'user']);
    expect(sent![1]).toEqual({ role: 'assistant', content: 'It is 2.' });
    // The summary took the whole exchange.
    const transcript = summaryRequests().at(-1)![1].content;
    expect(transcript).toContain('[assistant called calculator] {"expression":"1+1"}');
    expect(transcript).toContain('[tool result]');
    expect(transcript).toContain(tools.text);
  });

  it('fails the turn context_length_exceeded when even the tail it must keep is past the trigger, without asking the model', async () => {
    const chat = await conversation({ compaction: { triggerTokens: 200 } });
    const huge = await turn(chat, Array.from({ length: 400 }, (_, index) => `word${index}`).join(' '));
    expect(huge.events.at(-1)).toMatchObject({ type: 'turn-error', error: { code: 'context_length_exceeded' } });
    expect(huge.events.map((event) => event.type)).not.toContain('compaction-start');
    expect(stepRequests(huge.text)).toEqual([]);
  });

  it('compacts once and sends the step again when the provider answers context_length_exceeded', async () => {
    const chat = await conversation({ compaction: { triggerTokens: 100_000, keepRecentTokens: 50 } });
    const first = await turn(chat, scripted({ tokens: 300 }));
    stack.scripted.setFault({ refuse: { status: 400, code: 'context_length_exceeded', message: "This model's maximum context length is 100 tokens" }, times: 1 });
    const second = await turn(chat, 'and now?');
    expect(second.events.at(-1)).toMatchObject({ type: 'turn-finish' });
    expect(second.events.map((event) => event.type)).toContain('compaction-finish');
    const [refused, resent] = stepRequests(second.text);
    expect(refused!.map((message) => message.content)).toContain(first.text);
    expect(resent!.map((message) => message.role)).toEqual(['system', 'user']);

    // Refused again after its compaction: the turn fails rather than compacting again.
    stack.scripted.setFault({ refuse: { status: 400, code: 'context_length_exceeded', message: "This model's maximum context length is 100 tokens" } });
    const third = await turn(chat, 'still there?');
    expect(third.events.at(-1)).toMatchObject({ type: 'turn-error', error: { code: 'context_length_exceeded' } });
  });

  it('leaves a compaction behind on a fork or an edit before it', async () => {
    const chat = await conversation({ compaction: POLICY });
    const first = await turn(chat, scripted({ tokens: 300 }));
    const second = await turn(chat, scripted({ tokens: 300 }));
    await turn(chat, 'and now?');
    const stored = (await api.get(`/v1/conversations/${chat.id}`)).body;
    expect(stored.compactions).toHaveLength(1);

    const forked = await api.post(`/v1/conversations/${chat.id}/fork`, { messageId: stored.messages[1].id });
    expect(forked.status).toBe(201);
    const fork = { id: forked.body.id as string, client: await TestWsClient.subscribed(stack.url, { apiKey }, forked.body.id) };
    clients.push(fork.client);
    expect((await api.get(`/v1/conversations/${fork.id}`)).body.compactions).toEqual([]);
    const inFork = await turn(fork, 'in the fork');
    const forkRequest = JSON.stringify(stepRequests(inFork.text)[0]);
    expect(forkRequest).not.toContain(stored.compactions[0].summary);
    expect(forkRequest).not.toContain(second.text);

    // An edit of the second question replaces the messages the summary covers: its turn sends them, not the summary.
    const edited = await turn(chat, 'edited question', { fromMessageId: stored.messages[2].id });
    const [sent] = stepRequests(edited.text);
    expect(sent![0].content).toBe('Be brief.');
    expect(sent!.map((message) => message.content)).toContain(first.text);
    expect(sent!.map((message) => message.content)).not.toContain(second.text);
  });

  it('compacts on request, as a turn of its own: 409 while a turn is active', async () => {
    const chat = await conversation({ compaction: { triggerTokens: 100_000, keepRecentTokens: 50 } });
    const first = await turn(chat, scripted({ tokens: 300 }));
    const busy = await api.post(`/v1/conversations/${chat.id}/turns`, { content: scripted({ tokens: 30, tokenDelayMs: 50 }) });
    expect((await api.post(`/v1/conversations/${chat.id}/compact`, {})).status).toBe(409);
    await chat.client.waitForTurnEnd(busy.body.turnId);

    const posted = await api.post(`/v1/conversations/${chat.id}/compact`, { instructions: 'Summarise in one line.' });
    expect(posted.status).toBe(202);
    const events = (await chat.client.waitForTurnEnd(posted.body.turnId)).filter((event) => event.turnId === posted.body.turnId);
    expect(events.map((event) => event.type)).toEqual(['turn-start', 'compaction-start', 'compaction-finish', 'turn-finish']);
    expect(events.at(-1)).toMatchObject({ finishReason: 'compacted' });
    const detail = (await api.get(`/v1/turns/${posted.body.turnId}`)).body;
    expect(detail).toMatchObject({ status: 'completed', steps: [] });
    expect(detail.providerCalls.map((call: any) => call.kind)).toEqual(['compaction']);
    expect(summaryRequests().at(-1)![0]).toEqual({ role: 'system', content: 'Summarise in one line.' });
    expect(summaryRequests().at(-1)![1].content).toContain(first.text);

    const stored = (await api.get(`/v1/conversations/${chat.id}`)).body;
    expect(stored.messages).toHaveLength(4);
    expect(stored.compactions).toEqual([expect.objectContaining({ upToMessageId: stored.messages[1].id, turnId: posted.body.turnId })]);
    const next = await turn(chat, 'after the compaction');
    expect(stepRequests(next.text)[0]!.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'user']);

    // All there is belongs to the tail: nothing to summarise.
    const fresh = await conversation({ compaction: { triggerTokens: 100_000 } });
    await turn(fresh, 'hello');
    const nothing = await api.post(`/v1/conversations/${fresh.id}/compact`, {});
    const ended = await fresh.client.waitForTurnEnd(nothing.body.turnId);
    expect(ended.at(-1)).toMatchObject({ type: 'turn-finish', finishReason: 'nothing_to_compact' });
  });

  it('refuses a policy that cannot trigger: no triggerTokens on a model with no known window', async () => {
    const refused = await api.post('/v1/conversations', { compaction: { keepRecentTokens: 100 } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toMatch(/triggerTokens/);
    const both = await api.post('/v1/conversations', { compaction: { triggerTokens: 1000, triggerFraction: 0.5 } });
    expect(both.status).toBe(400);
  });
});
