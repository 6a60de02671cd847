import { ConversationsRepository } from '../../../src/store/conversations-repository';
import type { Db, Queryable } from '../../../src/store/db';
import { ToolCallsRepository } from '../../../src/store/tool-calls-repository';
import { TurnsRepository } from '../../../src/store/turns-repository';
import { UsersRepository } from '../../../src/store/users-repository';
import { createTestDatabase } from '../../support/database';

/** A step's tool starts and outcomes made at about the same time share statements, each row as if alone. */
describe.each(['postgres', 'pglite'] as const)('tool call statements on %s', (kind) => {
  let db: Db;
  let drop: () => Promise<void>;
  const sent: string[] = [];
  let toolCalls: ToolCallsRepository;
  let turns: TurnsRepository;
  let conversations: ConversationsRepository;
  let userId: string;

  beforeAll(async () => {
    ({ db, drop } = await createTestDatabase(kind));
    const counting: Queryable = {
      query: (sql, params) => {
        sent.push(sql);
        return db.query(sql, params);
      },
    };
    toolCalls = new ToolCallsRepository(counting);
    turns = new TurnsRepository(db);
    conversations = new ConversationsRepository(db);
    userId = (await new UsersRepository(db).createUserWithKey('owner')).id;
  });
  afterAll(() => drop());

  const stepWithCalls = async (count: number) => {
    const conversation = await conversations.create({ userId });
    const turn = await turns.insert({ conversationId: conversation.id, userId, input: 'hi', options: {}, requestHash: 'h' });
    const base = { turnId: turn.id, conversationId: conversation.id, step: 1, name: 'calculator', kind: 'builtin', argumentsText: '{}', args: {} };
    await toolCalls.insertMany(Array.from({ length: count }, (_, position) => ({ ...base, toolCallId: `call_${position}`, position, status: 'pending' as const })));
    return turn.id;
  };

  it('starts eight calls asked for in one tick in one statement, each counted once', async () => {
    const turnId = await stepWithCalls(8);
    const ids = Array.from({ length: 8 }, (_, position) => `call_${position}`);
    sent.length = 0;
    // The same call asked twice in one statement starts once.
    const started = await Promise.all([...ids, 'call_0'].map((id) => toolCalls.markRunning(turnId, id)));
    expect(sent).toHaveLength(1);
    expect(started.slice(0, 8).map((call) => [call?.toolCallId, call?.status, call?.attempts])).toEqual(ids.map((id) => [id, 'running', 1]));
    expect(started[8]).toBeNull();
  });

  it('stores eight outcomes in one statement, the first outcome of a call winning', async () => {
    const turnId = await stepWithCalls(8);
    const ids = Array.from({ length: 8 }, (_, position) => `call_${position}`);
    await Promise.all(ids.map((id) => toolCalls.markRunning(turnId, id)));
    // A call settled before (a cancel came first) keeps its outcome.
    await toolCalls.settle(turnId, 'call_7', { status: 'cancelled', error: { code: 'cancelled', message: 'cancelled' } });
    sent.length = 0;
    const settled = await Promise.all(
      ids.map((id, index) =>
        toolCalls.settleAttempt(
          turnId,
          id,
          index % 2 === 0 ? { status: 'succeeded', result: { value: index } } : { status: 'failed', error: { code: 'boom', message: `no ${index}` } },
        ),
      ),
    );
    expect(sent).toHaveLength(1);
    expect(settled.map((call) => call?.status ?? null)).toEqual(['succeeded', 'failed', 'succeeded', 'failed', 'succeeded', 'failed', 'succeeded', null]);
    const stored = await toolCalls.listForStep(turnId, 1);
    expect(stored.map((call) => [call.status, call.result, call.error?.code ?? null])).toEqual([
      ['succeeded', { value: 0 }, null],
      ['failed', null, 'boom'],
      ['succeeded', { value: 2 }, null],
      ['failed', null, 'boom'],
      ['succeeded', { value: 4 }, null],
      ['failed', null, 'boom'],
      ['succeeded', { value: 6 }, null],
      ['cancelled', null, 'cancelled'],
    ]);
    expect(stored[0]!.finishedAt).not.toBeNull();
    // The message the model gets is the single-call settle's.
    expect((await toolCalls.get(turnId, 'call_1'))?.error).toEqual({ code: 'boom', message: 'no 1' });
    expect(await toolCalls.settleAttempt(turnId, 'call_0', { status: 'failed', error: { code: 'late', message: 'late' } })).toBeNull();
  });

  it('sends the requests made while a statement is in flight together in the next one', async () => {
    const turnId = await stepWithCalls(6);
    sent.length = 0;
    const first = toolCalls.markRunning(turnId, 'call_0');
    // After the first statement went out: these wait for it, then go as one.
    await new Promise((resolve) => setImmediate(resolve));
    const rest = Promise.all([1, 2, 3, 4, 5].map((position) => toolCalls.markRunning(turnId, `call_${position}`)));
    expect((await first)?.attempts).toBe(1);
    expect((await rest).map((call) => call?.attempts)).toEqual([1, 1, 1, 1, 1]);
    expect(sent).toHaveLength(2);
  });
});
