import { randomBytes } from 'node:crypto';
import type { RecordedRequest } from '../../../src/scripted-model/request-log';
import { followBatchEvents } from '../../support/batch-events';
import { apiClient } from '../../support/http';
import { markedScripted } from '../../support/scripted';
import { startTestStack, type TestStack } from '../../support/stack';
import { TestWsClient } from '../../support/ws-client';

/** docs/API.md, "Agents": versions that never change, pinned or latest, seen in what the provider is sent. */
describe('agents', () => {
  let stack: TestStack;
  let api: ReturnType<typeof apiClient>;
  let apiKey: string;
  const clients: TestWsClient[] = [];

  beforeAll(async () => {
    stack = await startTestStack();
    const user = await stack.createUser(`agents-${randomBytes(3).toString('hex')}`);
    apiKey = user.apiKey;
    api = apiClient(stack.url, apiKey);
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await stack.close();
  });

  const agentName = () => `support-${randomBytes(4).toString('hex')}`;

  const subscribed = new Map<string, TestWsClient>();
  /** Runs one turn to its end; answers the request the provider got for it and the turn. */
  async function runTurn(conversationId: string, extra: Record<string, unknown> = {}): Promise<{ request: any; turn: any }> {
    const marker = `a-${randomBytes(4).toString('hex')}`;
    let client = subscribed.get(conversationId);
    if (!client) {
      client = await TestWsClient.subscribed(stack.url, { apiKey }, conversationId);
      subscribed.set(conversationId, client);
      clients.push(client);
    }
    const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content: markedScripted({ text: 'ok' }, marker), ...extra });
    expect(posted.status).toBe(202);
    const request = await stack.scripted.waitForRequest((recorded: RecordedRequest) => JSON.stringify(recorded.body).includes(marker));
    await client.waitForTurnEnd(posted.body.turnId);
    return { request: request.body, turn: (await api.get(`/v1/turns/${posted.body.turnId}`)).body };
  }

  const systemOf = (request: any) => request.messages.find((message: any) => message.role === 'system')?.content ?? null;

  it('makes versions that never change: PATCH makes the next one, GET ?version reads an earlier one, restore copies it', async () => {
    const created = await api.post('/v1/agents', { name: agentName(), instructions: 'You are v1.', modelSettings: { temperature: 0.2 }, maxSteps: 3 });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ version: 1, latestVersion: 1, instructions: 'You are v1.', modelSettings: { temperature: 0.2 }, archivedAt: null });
    expect(created.body.id).toMatch(/^agent_/);
    const id = created.body.id as string;

    const patched = await api.patch(`/v1/agents/${id}`, { instructions: 'You are v2.', maxSteps: null });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ version: 2, instructions: 'You are v2.', modelSettings: { temperature: 0.2 } });
    expect(patched.body.maxSteps).toBeUndefined();

    expect((await api.get(`/v1/agents/${id}?version=1`)).body).toMatchObject({ version: 1, instructions: 'You are v1.', maxSteps: 3, latestVersion: 2 });
    expect((await api.get(`/v1/agents/${id}`)).body).toMatchObject({ version: 2, instructions: 'You are v2.' });
    expect((await api.get(`/v1/agents/${id}?version=3`)).status).toBe(404);

    const restored = await api.post(`/v1/agents/${id}/restore`, { version: 1 });
    expect(restored.status).toBe(200);
    expect(restored.body).toMatchObject({ version: 3, restoredFrom: 1, instructions: 'You are v1.', maxSteps: 3 });
    const versions = (await api.get(`/v1/agents/${id}/versions`)).body.data;
    expect(versions.map((version: any) => [version.version, version.instructions])).toEqual([
      [3, 'You are v1.'],
      [2, 'You are v2.'],
      [1, 'You are v1.'],
    ]);
    const listed = (await api.get('/v1/agents?limit=100')).body.data.find((agent: any) => agent.id === id);
    expect(listed).toMatchObject({ version: 3 });
  });

  it('refuses a bad agent with 400 naming the field, and a second agent of one name with 409', async () => {
    const bad = await api.post('/v1/agents', { name: agentName(), tools: ['no_such_tool'] });
    expect(bad.status).toBe(400);
    expect(bad.body.error.details).toEqual([{ field: 'tools', message: 'unknown tool "no_such_tool"' }]);
    const unknownField = await api.post('/v1/agents', { name: agentName(), system: 'not a field of an agent' });
    expect(unknownField.status).toBe(400);
    const name = agentName();
    expect((await api.post('/v1/agents', { name })).status).toBe(201);
    const again = await api.post('/v1/agents', { name });
    expect(again.status).toBe(409);
    expect(again.body.error.code).toBe('conflict');
  });

  it('runs a conversation on its latest version at each turn, and a pinned one on its version, as the provider requests show; each turn records its version', async () => {
    const agent = (await api.post('/v1/agents', { name: agentName(), instructions: 'Prompt one.', modelSettings: { temperature: 0.3 } })).body;
    const following = (await api.post('/v1/conversations', { agent: agent.id })).body;
    expect(following.agent).toBe(agent.id);
    const pinned = (await api.post('/v1/conversations', { agent: `${agent.name}@1` })).body;
    expect(pinned.agent).toBe(`${agent.id}@1`);

    const first = await runTurn(following.id);
    expect(systemOf(first.request)).toBe('Prompt one.');
    expect(first.request.temperature).toBe(0.3);
    expect(first.turn).toMatchObject({ status: 'completed', agentId: agent.id, agentVersion: 1 });

    await api.patch(`/v1/agents/${agent.id}`, { instructions: 'Prompt two.', modelSettings: { temperature: 0.7 } });
    const second = await runTurn(following.id);
    expect(systemOf(second.request)).toBe('Prompt two.');
    expect(second.request.temperature).toBe(0.7);
    expect(second.turn).toMatchObject({ agentId: agent.id, agentVersion: 2 });

    const onPinned = await runTurn(pinned.id);
    expect(systemOf(onPinned.request)).toBe('Prompt one.');
    expect(onPinned.turn).toMatchObject({ agentId: agent.id, agentVersion: 1 });

    // A turn's own agent (pinned) for that turn, and a turn's own fields win over the agent's.
    const ownAgent = await runTurn(following.id, { agent: `${agent.id}@1`, maxSteps: 2 });
    expect(systemOf(ownAgent.request)).toBe('Prompt one.');
    expect(ownAgent.turn).toMatchObject({ agentVersion: 1, options: { maxSteps: 2 } });
  });

  it('archives: new references are a 404, PATCH and restore a 409, a conversation already on it goes on', async () => {
    const agent = (await api.post('/v1/agents', { name: agentName(), instructions: 'Archived soon.' })).body;
    const conversation = (await api.post('/v1/conversations', { agent: agent.id })).body;
    expect((await api.delete(`/v1/agents/${agent.id}`)).status).toBe(204);

    expect((await api.get(`/v1/agents/${agent.id}`)).body.archivedAt).toEqual(expect.any(String));
    expect((await api.get('/v1/agents?limit=100')).body.data.some((listed: any) => listed.id === agent.id)).toBe(false);
    const newConversation = await api.post('/v1/conversations', { agent: agent.id });
    expect(newConversation.status).toBe(404);
    expect((await api.post('/v1/conversations', { agent: agent.name })).status).toBe(404);
    const other = (await api.post('/v1/conversations', {})).body;
    expect((await api.post(`/v1/conversations/${other.id}/turns`, { content: 'hi', agent: agent.id })).status).toBe(404);
    const patched = await api.patch(`/v1/agents/${agent.id}`, { instructions: 'no' });
    expect(patched.status).toBe(409);
    expect(patched.body.error.code).toBe('conflict');
    expect((await api.post(`/v1/agents/${agent.id}/restore`, { version: 1 })).status).toBe(409);

    const goesOn = await runTurn(conversation.id);
    expect(systemOf(goesOn.request)).toBe('Archived soon.');
    expect(goesOn.turn).toMatchObject({ status: 'completed', agentVersion: 1 });
  });

  it("answers 404 for someone else's agent, as for one that does not exist", async () => {
    const agent = (await api.post('/v1/agents', { name: agentName() })).body;
    const other = await stack.createUser(`agents-other-${randomBytes(3).toString('hex')}`);
    const otherApi = apiClient(stack.url, other.apiKey);
    expect((await otherApi.get(`/v1/agents/${agent.id}`)).status).toBe(404);
    expect((await otherApi.post('/v1/conversations', { agent: agent.id })).status).toBe(404);
    expect((await otherApi.patch(`/v1/agents/${agent.id}`, { instructions: 'mine now' })).status).toBe(404);
  });

  it("runs a batch's items on defaults.agent, a Responses prompt on its pinned version, and a chat on its first POST's agent", async () => {
    const agent = (await api.post('/v1/agents', { name: agentName(), instructions: 'Batch prompt one.' })).body;
    await api.patch(`/v1/agents/${agent.id}`, { instructions: 'Batch prompt two.' });

    const batchMarker = `b-${randomBytes(4).toString('hex')}`;
    const submitted = await api.post('/v1/batches', { items: [{ messages: [markedScripted({ text: 'batch ok' }, batchMarker)] }], defaults: { agent: `${agent.id}@1` } });
    expect(submitted.status).toBe(202);
    const progress = await followBatchEvents(stack.url, apiKey, submitted.body.batchId);
    const batchRequest = await stack.scripted.waitForRequest((recorded) => JSON.stringify(recorded.body).includes(batchMarker));
    expect(systemOf(batchRequest.body)).toBe('Batch prompt one.');
    await progress.finished();
    progress.close();
    const results = await api.get(`/v1/batches/${submitted.body.batchId}/results`);
    // One line: the test client parses it as JSON.
    expect(results.body).toMatchObject({ status: 'succeeded', agentId: agent.id, agentVersion: 1 });
    const archivedAgent = (await api.post('/v1/agents', { name: agentName() })).body;
    await api.delete(`/v1/agents/${archivedAgent.id}`);
    expect((await api.post('/v1/batches', { items: [{ messages: ['hi'] }], defaults: { agent: archivedAgent.id } })).status).toBe(404);

    const responseMarker = `r-${randomBytes(4).toString('hex')}`;
    const response = await api.post('/openai/v1/responses', { input: markedScripted({ text: 'response ok' }, responseMarker), prompt: { id: agent.id, version: '1' } });
    expect(response.status).toBe(200);
    const responseRequest = await stack.scripted.waitForRequest((recorded) => JSON.stringify(recorded.body).includes(responseMarker));
    expect(systemOf(responseRequest.body)).toBe('Batch prompt one.');
    const latest = await api.post('/openai/v1/responses', { input: 'hello', prompt: { id: agent.id } });
    expect(latest.status).toBe(200);
    expect((await api.post('/openai/v1/responses', { input: 'hello', prompt: { id: archivedAgent.id } })).status).toBe(404);

    const chatId = `chat-${randomBytes(4).toString('hex')}`;
    const chatMarker = `c-${randomBytes(4).toString('hex')}`;
    const chat = await api.post('/api/chat', {
      id: chatId,
      messages: [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: markedScripted({ text: 'chat ok' }, chatMarker) }] }],
      trigger: 'submit-message',
      agent: agent.name,
    });
    expect(chat.status).toBe(200);
    const chatRequest = await stack.scripted.waitForRequest((recorded) => JSON.stringify(recorded.body).includes(chatMarker));
    expect(systemOf(chatRequest.body)).toBe('Batch prompt two.');
    const conversation = (await api.get(`/v1/conversations?externalId=${chatId}`)).body.data[0];
    expect(conversation.agent).toBe(agent.id);
  });
});
