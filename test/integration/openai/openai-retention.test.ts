import OpenAI from 'openai';
import { apiClient } from '../../support/http';
import { openAiClient } from '../../support/openai-sdk';
import { poll } from '../../support/poll';
import { scripted } from '../../support/scripted';
import { startTestStack, type TestStack } from '../../support/stack';
import { ConversationsRepository } from '../../../src/store/conversations-repository';
import { sweepExpiredConversations } from '../../../src/openai/conversation-retention';

const DAY_MS = 24 * 3600 * 1000;

/**
 * Deleting conversations (docs/API.md): `DELETE /v1/conversations/:id`, and the retention of the
 * conversations `/openai/v1` makes (OPENAI_RETENTION_DAYS), which deletes them the same way.
 */
describe('conversation deletion and OpenAI retention', () => {
  let stack: TestStack;
  let client: OpenAI;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    // A short interval: the workers' sweep runs every RECONCILE_INTERVAL_MS.
    stack = await startTestStack({ workers: 1, env: { OPENAI_RETENTION_DAYS: '30', RECONCILE_INTERVAL_MS: '300' } });
    const owner = await stack.createUser('retention');
    client = openAiClient(stack.url, owner.apiKey);
    api = apiClient(stack.url, owner.apiKey);
  });
  afterAll(() => stack.close());

  const ledgerRows = async (conversationId: string) =>
    (await stack.resources.db.query<{ n: number }>('SELECT count(*)::int AS n FROM provider_calls WHERE conversation_id = $1', [conversationId])).rows[0]!.n;
  const conversationOf = async (responseId: string) =>
    (await stack.resources.db.query<{ id: string }>('SELECT conversation_id AS id FROM openai_responses WHERE id = $1', [responseId])).rows[0]!.id;
  const exists = async (conversationId: string) => (await api.get(`/v1/conversations/${conversationId}`)).status === 200;

  it('deletes a conversation natively with its messages and turns, keeping the usage ledger; 409 while a turn is active', async () => {
    const response = await client.responses.create({ input: scripted({ text: 'Soon gone.' }) });
    const { conversationId, turnId } = (
      await stack.resources.db.query<{ conversationId: string; turnId: string }>(
        'SELECT conversation_id AS "conversationId", turn_id AS "turnId" FROM openai_responses WHERE id = $1',
        [response.id],
      )
    ).rows[0]!;
    expect(await ledgerRows(conversationId)).toBeGreaterThan(0);

    const deleted = await api.request('DELETE', `/v1/conversations/${conversationId}`);
    expect([deleted.status, deleted.body]).toEqual([200, { id: conversationId, deleted: true }]);
    expect(await exists(conversationId)).toBe(false);
    expect((await api.get(`/v1/turns/${turnId}`)).status).toBe(404);
    await expect(client.responses.retrieve(response.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect(await ledgerRows(conversationId)).toBeGreaterThan(0);
    expect((await api.request('DELETE', `/v1/conversations/${conversationId}`)).status).toBe(404);

    const running = await client.responses.create({ input: scripted({ tokens: 2000, tokenDelayMs: 20 }), background: true });
    const busyId = await conversationOf(running.id);
    const busy = await api.request('DELETE', `/v1/conversations/${busyId}`);
    expect([busy.status, busy.body.error.code]).toEqual([409, 'conversation_busy']);
    await client.responses.cancel(running.id);
    expect((await api.request('DELETE', `/v1/conversations/${busyId}`)).status).toBe(200);
  });

  it('sweeps the conversations /openai/v1 made once their last turn is OPENAI_RETENTION_DAYS old, and no others', async () => {
    const made = await client.conversations.create({ metadata: { kept: 'no' } });
    const response = await client.responses.create({ input: scripted({ text: 'A response.' }) });
    const fromResponse = await conversationOf(response.id);
    const completion = await client.chat.completions.create({ model: 'scripted', messages: [{ role: 'user', content: scripted({ text: 'A completion.' }) }] });
    const fromChat = (completion as any).switchyard.conversationId as string;
    const native = (await api.post('/v1/conversations', {})).body.id as string;
    const openAi = [made.id, fromResponse, fromChat];

    const repository = new ConversationsRepository(stack.resources.db);
    const deps = { db: stack.resources.db, conversations: repository };
    // Within the retention: nothing goes.
    expect(await sweepExpiredConversations(deps, { now: new Date(Date.now() + 29 * DAY_MS), retentionDays: 30 })).toBe(0);
    // `0` keeps them.
    expect(await sweepExpiredConversations(deps, { now: new Date(Date.now() + 365 * DAY_MS), retentionDays: 0 })).toBe(0);
    for (const id of [...openAi, native]) expect(await exists(id)).toBe(true);

    // The workers' own sweep, once the last turns are 31 days old (set back again on each look: a
    // turn's end may still move its conversation's updated_at).
    await poll(
      'the workers did not sweep the expired OpenAI conversations',
      async () => {
        await stack.resources.db.query("UPDATE conversations SET created_at = created_at - interval '31 days', updated_at = updated_at - interval '31 days' WHERE id = ANY($1)", [
          [...openAi, native],
        ]);
        await stack.resources.db.query(
          "UPDATE turns SET created_at = created_at - interval '31 days', finished_at = finished_at - interval '31 days' WHERE conversation_id = ANY($1)",
          [[...openAi, native]],
        );
        const left = await Promise.all(openAi.map(exists));
        return left.every((present) => !present);
      },
      20_000,
      200,
    );
    await expect(client.conversations.retrieve(made.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    await expect(client.responses.retrieve(response.id)).rejects.toBeInstanceOf(OpenAI.NotFoundError);
    expect(await ledgerRows(fromResponse)).toBeGreaterThan(0);
    // A conversation made on /v1 is kept until deleted.
    expect(await exists(native)).toBe(true);
  });

  it('keeps an expired conversation whose turn is still active, or that took a turn since it was listed', async () => {
    const conversation = await client.conversations.create({});
    const running = await client.responses.create({ conversation: conversation.id, input: scripted({ tokens: 2000, tokenDelayMs: 20 }), background: true });
    const deps = { db: stack.resources.db, conversations: new ConversationsRepository(stack.resources.db) };
    await sweepExpiredConversations(deps, { now: new Date(Date.now() + 31 * DAY_MS), retentionDays: 30 });
    expect(await client.conversations.retrieve(conversation.id)).toMatchObject({ id: conversation.id });
    await client.responses.cancel(running.id);
    // Listed as expired a day ago, with a turn since: deleting it under its lock finds the turn.
    expect(await stack.resources.db.transaction((tx) => deps.conversations.deleteIfExpired(conversation.id, new Date(Date.now() - DAY_MS), tx))).toBe(false);
    expect(await client.conversations.retrieve(conversation.id)).toMatchObject({ id: conversation.id });
  });
});
