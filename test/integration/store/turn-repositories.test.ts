import { poll } from '../../support/poll';
import { ConversationsRepository } from '../../../src/store/conversations-repository';
import type { Db } from '../../../src/store/db';
import { MessagesRepository } from '../../../src/store/messages-repository';
import { ToolCallsRepository } from '../../../src/store/tool-calls-repository';
import { TurnsRepository } from '../../../src/store/turns-repository';
import { UsersRepository } from '../../../src/store/users-repository';
import { createTestDatabase } from '../../support/database';
import { newRunId, SchedulesRepository } from '../../../src/schedules/store/schedules-repository';
import { waitUntilStatementWaitsForLock } from '../../support/lock-waits';

const usage = { promptTokens: 1, completionTokens: 2, totalTokens: 3 };
const transcriptOf = (messages: { role: string; content: unknown }[]) => messages.map((message) => [message.role, message.content]);

describe.each(['postgres', 'pglite'] as const)('turn repositories on %s', (kind) => {
  let db: Db;
  let drop: () => Promise<void>;
  let conversations: ConversationsRepository;
  let turns: TurnsRepository;
  let messages: MessagesRepository;
  let toolCalls: ToolCallsRepository;
  let userId: string;

  beforeAll(async () => {
    ({ db, drop } = await createTestDatabase(kind));
    conversations = new ConversationsRepository(db);
    turns = new TurnsRepository(db);
    messages = new MessagesRepository(db);
    toolCalls = new ToolCallsRepository(db);
    userId = (await new UsersRepository(db).createUserWithKey('owner')).id;
  });
  afterAll(() => drop());

  const newTurn = async (conversationId: string, idempotencyKey?: string) =>
    turns.insert({ conversationId, userId, input: 'hi', options: {}, requestHash: 'h', ...(idempotencyKey ? { idempotencyKey } : {}) });

  it('pages conversations newest first without skipping or repeating', async () => {
    const other = (await new UsersRepository(db).createUserWithKey('pager')).id;
    const made = [];
    for (let i = 0; i < 7; i++) made.push(await conversations.create({ userId: other, title: `c${i}` }));
    const seen: string[] = [];
    let cursor;
    do {
      const page: Awaited<ReturnType<ConversationsRepository['list']>> = await conversations.list(other, { limit: 3, ...(cursor ? { cursor } : {}) });
      seen.push(...page.data.map((c) => c.title!));
      cursor = page.nextCursor ?? undefined;
    } while (cursor);
    expect(seen).toEqual(made.map((c) => c.title).reverse());
    expect(await conversations.get(userId, made[0]!.id)).toBeNull();
  });

  it('keeps one turn per idempotency key of a conversation', async () => {
    const conversation = await conversations.create({ userId });
    await newTurn(conversation.id, 'k');
    await expect(newTurn(conversation.id, 'k')).rejects.toThrow();
    expect((await turns.findByIdempotencyKey(conversation.id, 'k'))?.conversationId).toBe(conversation.id);
  });

  it('admits a turn in one call only while its conversation is clear and its user under the limit', async () => {
    const owner = (await new UsersRepository(db).createUserWithKey('clear')).id;
    const [first, second] = [await conversations.create({ userId: owner }), await conversations.create({ userId: owner })];
    const input = (conversationId: string, idempotencyKey?: string) => ({
      conversationId,
      userId: owner,
      input: 'hi',
      options: {},
      requestHash: 'h',
      ...(idempotencyKey ? { idempotencyKey } : {}),
    });
    const admitted = await turns.admitIfClear(input(first.id, 'a'), 2);
    expect(admitted).toMatchObject({ outcome: 'admitted', activeOfUser: 0, turn: { conversationId: first.id, status: 'queued', idempotencyKey: 'a' } });
    // An unfinished turn ahead in the conversation.
    expect(await turns.admitIfClear(input(first.id), 2)).toEqual({ outcome: 'not_clear' });
    expect(await turns.admitIfClear(input(second.id), 2)).toMatchObject({ outcome: 'admitted', activeOfUser: 1 });
    // The user's limit reached.
    expect(await turns.admitIfClear(input((await conversations.create({ userId: owner })).id), 2)).toEqual({ outcome: 'not_clear' });
    // A used idempotency key, once the conversation is clear again.
    await turns.finish(admitted.outcome === 'admitted' ? admitted.turn.id : '', null, { status: 'cancelled', finishReason: 'cancelled' }, []);
    expect(await turns.admitIfClear(input(first.id, 'a'), 5)).toEqual({ outcome: 'not_clear' });
    expect(await turns.admitIfClear(input(first.id, 'b'), 5)).toMatchObject({ outcome: 'admitted', activeOfUser: 1, turn: { idempotencyKey: 'b' } });
    expect((await turns.listForConversation(first.id)).map((turn) => turn.idempotencyKey)).toEqual(['a', 'b']);
    // Someone else's conversation is missing, as one that does not exist.
    expect(await turns.admitIfClear({ ...input(first.id), userId }, 5)).toEqual({ outcome: 'missing' });
  });

  it("admits a schedule's turn with its tick's run in one statement, and neither when the tick has its run already", async () => {
    const schedules = new SchedulesRepository(db);
    const schedule = await schedules.create({
      userId,
      content: 'hi',
      agentId: null,
      agentVersion: null,
      conversationId: null,
      cron: null,
      everyMs: 3_600_000,
      at: null,
      firstAt: new Date(),
      timezone: 'UTC',
      overlap: 'skip',
      catchUp: 'one',
      enabled: true,
      startAt: null,
      endAt: null,
      metadata: null,
      nextRunAt: null,
    });
    const scheduledFor = new Date('2026-01-01T00:00:00Z');
    const input = (conversationId: string) => ({ conversationId, userId, input: 'hi', options: {}, requestHash: 'h' });
    const record = { kind: 'schedule_run' as const, runId: newRunId(), scheduleId: schedule.id, scheduledFor };
    const first = await conversations.create({ userId });
    const admitted = await turns.admitIfClear(input(first.id), 100, record);
    expect(admitted).toMatchObject({ outcome: 'admitted', turn: { conversationId: first.id } });
    expect(await schedules.runFor(schedule.id, scheduledFor)).toMatchObject({
      runId: record.runId,
      status: 'started',
      turnId: admitted.outcome === 'admitted' ? admitted.turn.id : '',
      conversationId: first.id,
    });
    // A second run of the same tick (another worker, a claim that lapsed): refused, its turn with it.
    const second = await conversations.create({ userId });
    await expect(turns.admitIfClear(input(second.id), 100, { ...record, runId: newRunId() })).rejects.toMatchObject({ code: '23505' });
    expect(await turns.listForConversation(second.id)).toEqual([]);
    // Not clear: nothing written, the transaction decides.
    expect(await turns.admitIfClear(input(first.id), 100, { ...record, runId: newRunId(), scheduledFor: new Date('2026-01-01T01:00:00Z') })).toEqual({ outcome: 'not_clear' });
    expect(await schedules.runFor(schedule.id, new Date('2026-01-01T01:00:00Z'))).toBeNull();
  });

  it('leaves admission to the transaction while the path ends with calls that have no results, and outlines that last step', async () => {
    const conversation = await conversations.create({ userId });
    const insert = (role: string, fields: { toolCalls?: string[]; toolCallId?: string } = {}) =>
      db.query('INSERT INTO messages (conversation_id, role, content, tool_calls, tool_call_id) VALUES ($1, $2, $3, $4, $5)', [
        conversation.id,
        role,
        JSON.stringify('text'),
        fields.toolCalls ? JSON.stringify(fields.toolCalls.map((id) => ({ id, type: 'function', function: { name: 'f', arguments: '{}' } }))) : null,
        fields.toolCallId ?? null,
      ]);
    const admit = async () => (await turns.admitIfClear({ conversationId: conversation.id, userId, input: 'hi', options: {}, requestHash: 'h' }, 100)).outcome;
    const lastStep = async () =>
      (await messages.listLastStepOutline(conversation.id)).map((message) => [message.role, message.tool_calls.map((call) => call.id), message.tool_call_id]);
    await insert('user');
    await insert('assistant', { toolCalls: ['s1', 'c1'] });
    await insert('tool', { toolCallId: 's1' });
    expect(await lastStep()).toEqual([
      ['assistant', ['s1', 'c1'], null],
      ['tool', [], 's1'],
    ]);
    expect(await admit()).toBe('not_clear');
    await insert('tool', { toolCallId: 'c1' });
    expect(await admit()).toBe('admitted');
  });

  it('sees a turn committed while it waited for the conversation, and admits nothing past it', async () => {
    const conversation = await conversations.create({ userId });
    const turnInput = { conversationId: conversation.id, userId, options: {}, requestHash: 'h' };
    let admitting: Promise<unknown> | undefined;
    await db.transaction(async (tx) => {
      await conversations.get(userId, conversation.id, tx, true);
      await turns.insert({ ...turnInput, input: 'first' }, tx);
      admitting = turns.admitIfClear({ ...turnInput, input: 'second' }, 100);
      // PGlite runs one transaction at a time: there the call waits for this one to end anyway.
      if (kind === 'postgres') await waitUntilStatementWaitsForLock(db, 'admit_turn_if_clear');
    });
    expect(await admitting).toEqual({ outcome: 'not_clear' });
    expect((await turns.activeTurns(conversation.id)).map((turn) => turn.input)).toEqual(['first']);
  });

  it('lets a new job take a running turn once the reconciler released it', async () => {
    const conversation = await conversations.create({ userId });
    const turn = await newTurn(conversation.id);
    await turns.beginAttempt(turn.id, 'lost-job');
    expect(await turns.beginAttempt(turn.id, 're-enqueued')).toBeNull();
    await turns.releaseRunningJob(turn.id, 'lost-job');
    expect(await turns.beginAttempt(turn.id, 're-enqueued')).toMatchObject({ restarted: true, turn: { attempt: 2, runningJob: 're-enqueued' } });
  });

  it('starts attempts, continues a waiting turn in the same attempt, and fences stale writers', async () => {
    const conversation = await conversations.create({ userId });
    const turn = await newTurn(conversation.id);
    const first = await turns.beginAttempt(turn.id, 'start');
    expect(first).toMatchObject({ restarted: true, turn: { attempt: 1, status: 'running', runningJob: 'start' } });
    expect(await turns.setWaiting(turn.id, 1, 'tools')).toBe(true);
    expect(await turns.beginAttempt(turn.id, 'continuation')).toMatchObject({
      restarted: false,
      previous: { status: 'waiting_tools', awaiting: 'tools' },
      turn: { attempt: 1, awaiting: null, runningJob: 'continuation' },
    });
    // Another job (a redelivered start) leaves a turn that a live job runs alone.
    expect(await turns.beginAttempt(turn.id, 'start')).toBeNull();
    // A crash: the same job, redelivered, takes over with attempt 2; the first run's writes no longer land.
    expect(await turns.beginAttempt(turn.id, 'continuation')).toMatchObject({ restarted: true, turn: { attempt: 2 } });
    const record = { step: 1, finishReason: 'stop', usage, startedAt: new Date().toISOString(), finishedAt: new Date().toISOString() };
    expect(await turns.commitStep(turn.id, 1, record)).toBe(false);
    expect(await turns.commitStep(turn.id, 2, record)).toBe(true);
    expect(await turns.commitStep(turn.id, 2, record)).toBe(false);
    const ended = await turns.finish(turn.id, 2, { status: 'completed', finishReason: 'stop' }, []);
    expect(ended).toMatchObject({ status: 'completed', step: 1, usage, steps: [record] });
    expect(await turns.finish(turn.id, null, { status: 'cancelled', finishReason: 'cancelled' }, [])).toBeNull();
  });

  it('parks a turn for its tool jobs with the step that called them, only while the attempt owns it', async () => {
    const conversation = await conversations.create({ userId });
    const turn = await newTurn(conversation.id);
    await turns.beginAttempt(turn.id, 'start');
    const record = { step: 1, finishReason: 'tool_calls', usage, startedAt: new Date().toISOString(), finishedAt: new Date().toISOString() };
    expect(await turns.commitStep(turn.id, 2, record, true)).toBe(false);
    expect(await turns.get(turn.id)).toMatchObject({ status: 'running', awaiting: null, step: 0 });
    expect(await turns.commitStep(turn.id, 1, record, true)).toBe(true);
    expect(await turns.get(turn.id)).toMatchObject({ status: 'waiting_tools', awaiting: 'tools', step: 1 });
    // The flow's parent continues it in the same attempt.
    expect(await turns.beginAttempt(turn.id, 'continuation')).toMatchObject({ restarted: false, turn: { attempt: 1, status: 'running', awaiting: null } });
  });

  it('writes each message once and lists them in order', async () => {
    const conversation = await conversations.create({ userId });
    const turn = await newTurn(conversation.id);
    // Starting the turn writes its user message; a restart (a new attempt) does not again. Both
    // read the history with it when asked to.
    const own = [{ id: expect.stringMatching(/^msg_\d+$/), role: 'user', content: 'hi', turnId: turn.id }];
    expect((await turns.beginAttempt(turn.id, 'job', true))?.history).toEqual(own);
    expect((await turns.beginAttempt(turn.id, 'job', true))?.history).toEqual(own);
    expect(await turns.beginAttempt(turn.id, 'job')).not.toHaveProperty('history');
    const call = { id: 'call_0', type: 'function' as const, function: { name: 'calculator', arguments: '{"expression":"1+1"}' } };
    expect(await messages.insertAssistantMessage({ conversationId: conversation.id, turnId: turn.id, step: 1, content: null, toolCalls: [call] })).toBe(true);
    expect(await messages.insertAssistantMessage({ conversationId: conversation.id, turnId: turn.id, step: 1, content: 'again' })).toBe(false);
    const toolCall = { turnId: turn.id, toolCallId: 'call_0', conversationId: conversation.id, step: 1, position: 0, name: 'calculator', kind: 'builtin' };
    await toolCalls.insertMany([{ ...toolCall, argumentsText: call.function.arguments, args: { expression: '1+1' }, status: 'pending' }]);
    const step = { turnId: turn.id, step: 1 };
    // Only a settled call has its message.
    expect(await messages.insertToolMessages(step, undefined, { attempt: 3 })).toBe('written');
    await toolCalls.settle(turn.id, 'call_0', { status: 'succeeded', result: 2 });
    // Fenced by the attempt (the third to begin runs the turn), written once.
    expect(await messages.insertToolMessages(step, undefined, { attempt: 2 })).toBe('fenced');
    expect(await messages.insertToolMessages(step, undefined, { attempt: 3 })).toBe('written');
    expect(await messages.insertToolMessages(step, undefined, { attempt: 3 })).toBe('existed');
    await messages.insertToolMessages({ turnId: turn.id });
    expect(await messages.list(conversation.id)).toEqual([
      { id: own[0]!.id, role: 'user', content: 'hi', turnId: turn.id },
      { id: expect.any(String), role: 'assistant', content: null, toolCalls: [call], turnId: turn.id },
      { id: expect.any(String), role: 'tool', content: '2', toolCallId: 'call_0', turnId: turn.id },
    ]);
    // The last messages, and never fewer than all of the given turn's.
    expect((await messages.listRecent(conversation.id, 2, 'turn_none')).map((message) => message.role)).toEqual(['assistant', 'tool']);
    expect(await messages.listRecent(conversation.id, 1, turn.id)).toEqual(await messages.list(conversation.id));
    expect(await messages.listRecent(conversation.id, 10, 'turn_none')).toEqual(await messages.list(conversation.id));

    // The next turn's first attempt reads every message before its own, and its own last.
    await turns.finish(turn.id, null, { status: 'completed', finishReason: 'stop' }, []);
    const next = await turns.insert({ conversationId: conversation.id, userId, input: [{ type: 'text', text: 'next' }], options: {}, requestHash: 'h' });
    expect((await turns.beginAttempt(next.id, 'next-job', true))?.history).toEqual(await messages.list(conversation.id));
    expect((await messages.list(conversation.id)).at(-1)).toEqual({ id: expect.any(String), role: 'user', content: [{ type: 'text', text: 'next' }], turnId: next.id });
    // Not for a turn that bounds its history (the runner reads the last messages itself).
    const bounded = await turns.insert({ conversationId: conversation.id, userId, input: 'b', options: { maxHistoryMessages: 2 }, requestHash: 'h' });
    await turns.finish(next.id, null, { status: 'completed', finishReason: 'stop' }, []);
    expect(await turns.beginAttempt(bounded.id, 'bounded-job', true)).not.toHaveProperty('history');
  });

  it('marks what a branch replaces at admission, and what turns ahead of it wrote when it starts', async () => {
    const conversation = await conversations.create({ userId });
    const answered = async (input: string) => {
      const turn = await turns.insert({ conversationId: conversation.id, userId, input, options: {}, requestHash: 'h' });
      await turns.beginAttempt(turn.id, `job-${turn.id}`);
      await messages.insertAssistantMessage({ conversationId: conversation.id, turnId: turn.id, step: 1, content: `${input}!` });
      await turns.finish(turn.id, null, { status: 'completed', finishReason: 'stop' }, []);
      return turn;
    };
    const first = await answered('one');
    await answered('two');
    const point = await messages.findBranchPoint(conversation.id, null);
    expect(point).toMatchObject({ content: 'two' });
    // An edit of the first message, admitted while a turn runs ahead of it (onBusy enqueue).
    const ahead = await turns.insert({ conversationId: conversation.id, userId, input: 'three', options: {}, requestHash: 'h' });
    await turns.beginAttempt(ahead.id, 'ahead-job');
    const firstPoint = (await messages.findBranchPoint(conversation.id, (await messages.list(conversation.id))[0]!.id.slice('msg_'.length)))!;
    const edit = await turns.insert({
      conversationId: conversation.id,
      userId,
      input: 'one, edited',
      options: {},
      requestHash: 'h',
      branch: { kind: 'edit', fromMessageId: firstPoint.messageId },
    });
    await turns.supersede(conversation.id, firstPoint, 'edit', edit.id);
    expect(transcriptOf(await messages.list(conversation.id))).toEqual([['user', 'three']]);
    // What the turn ahead writes after the admission is on the replaced branch too: marked when the edit starts.
    await messages.insertAssistantMessage({ conversationId: conversation.id, turnId: ahead.id, step: 1, content: 'three!' });
    await turns.finish(ahead.id, null, { status: 'completed', finishReason: 'stop' }, []);
    const begun = await turns.beginAttempt(edit.id, 'edit-job', true);
    expect(transcriptOf(begun!.history!)).toEqual([['user', 'one, edited']]);
    expect(transcriptOf(await messages.list(conversation.id))).toEqual([['user', 'one, edited']]);
    const all = await messages.list(conversation.id, { includeSuperseded: true });
    expect(all.map((message) => message.supersededBy ?? null)).toEqual([edit.id, edit.id, edit.id, edit.id, edit.id, edit.id, null]);
    expect((await turns.listForConversation(conversation.id)).map((turn) => turn.supersededBy)).toEqual([edit.id, edit.id, edit.id, null]);
    expect(await turns.get(edit.id)).toMatchObject({ branch: { kind: 'edit', fromMessageId: firstPoint.messageId } });
    expect(await messages.findBranchPoint(conversation.id, firstPoint.messageId)).toBeNull();
    expect(first.supersededBy).toBeNull();

    // A fork copies the messages it is given, in no turn, and remembers where it came from.
    const edited = (await messages.list(conversation.id))[0]!.id.slice('msg_'.length);
    const fork = await conversations.fork(userId, conversation.id, edited, [edited]);
    expect(fork).toMatchObject({ forkedFrom: { conversationId: conversation.id, messageId: `msg_${edited}` } });
    expect((await messages.list(fork!.id)).map((message) => [message.role, message.content, message.turnId])).toEqual([['user', 'one, edited', null]]);
    expect(await conversations.fork('someone-else', conversation.id, edited, [edited])).toBeNull();
    // A replaced message is on no path: there is nothing up to it.
    expect(await messages.listOutline(conversation.id, { rowId: all[0]!.id.slice('msg_'.length), inclusive: true })).toEqual([]);
  });

  it("outlines a path up to a message: roles and call ids, a step's other results, the messages of a chat-messages input", async () => {
    const conversation = await conversations.create({ userId });
    const replacing = await newTurn(conversation.id);
    const insert = async (role: string, fields: { content?: unknown; toolCalls?: unknown; toolCallId?: string; supersededBy?: string } = {}) =>
      String(
        (
          await db.query<{ id: string }>(
            'INSERT INTO messages (conversation_id, role, content, tool_calls, tool_call_id, superseded_by) VALUES ($1, $2, $3, $4, $5, $6) RETURNING id',
            [
              conversation.id,
              role,
              JSON.stringify(fields.content ?? 'text'),
              fields.toolCalls ? JSON.stringify(fields.toolCalls) : null,
              fields.toolCallId ?? null,
              fields.supersededBy ?? null,
            ],
          )
        ).rows[0]!.id,
      );
    const call = (id: string) => ({ id, type: 'function', function: { name: 'f', arguments: 'x'.repeat(10_000) } });
    const question = await insert('user');
    const step = await insert('assistant', { content: null, toolCalls: [call('a'), call('b'), call('c')] });
    const [a, b, c] = [await insert('tool', { toolCallId: 'a' }), await insert('tool', { toolCallId: 'b' }), await insert('tool', { toolCallId: 'c' })];
    const input = await insert('user', {
      content: {
        type: 'chat_messages',
        messages: [
          { role: 'assistant', content: null, tool_calls: [call('x')] },
          { role: 'tool', tool_call_id: 'x', content: 'r' },
          { role: 'user', content: 'go' },
        ],
      },
    });
    await insert('user', { supersededBy: replacing.id });
    const answer = await insert('assistant');
    const outline = (rowId: string, inclusive: boolean, withToolRun?: boolean) =>
      messages.listOutline(conversation.id, { rowId, inclusive, ...(withToolRun !== undefined ? { withToolRun } : {}) });
    const steps = [
      { rowId: question, role: 'user', tool_calls: [], tool_call_id: null },
      { rowId: step, role: 'assistant', tool_calls: [{ id: 'a' }, { id: 'b' }, { id: 'c' }], tool_call_id: null },
      { rowId: a, role: 'tool', tool_calls: [], tool_call_id: 'a' },
      { rowId: b, role: 'tool', tool_calls: [], tool_call_id: 'b' },
      { rowId: c, role: 'tool', tool_calls: [], tool_call_id: 'c' },
    ];

    // At the step's assistant message or at one of its results: the whole step.
    expect(await outline(step, true, true)).toEqual(steps);
    expect(await outline(a, true, true)).toEqual(steps);
    expect(await outline(b, true, true)).toEqual(steps);
    // Without the run, the path stops where it was asked to.
    expect(await outline(a, true)).toEqual(steps.slice(0, 3));
    expect(await outline(input, false, true)).toEqual(steps);
    // A chat-messages input is its messages; a replaced message is not on the path.
    expect(await outline(answer, true)).toEqual([
      ...steps,
      { rowId: input, role: 'assistant', tool_calls: [{ id: 'x' }], tool_call_id: null },
      { rowId: input, role: 'tool', tool_calls: [], tool_call_id: 'x' },
      { rowId: input, role: 'user', tool_calls: [], tool_call_id: null },
      { rowId: answer, role: 'assistant', tool_calls: [], tool_call_id: null },
    ]);
  });

  it('leaves an unfinished turn its messages until the edit of its question starts', async () => {
    const conversation = await conversations.create({ userId });
    const ahead = await turns.insert({ conversationId: conversation.id, userId, input: 'question', options: {}, requestHash: 'h' });
    await turns.beginAttempt(ahead.id, 'ahead-job');
    const point = (await messages.findBranchPoint(conversation.id, null))!;
    const edit = await turns.insert({
      conversationId: conversation.id,
      userId,
      input: 'better question',
      options: {},
      requestHash: 'h',
      branch: { kind: 'edit', fromMessageId: point.messageId },
    });
    await turns.supersede(conversation.id, point, 'edit', edit.id);
    // The running turn still reads its question.
    expect(transcriptOf(await messages.list(conversation.id))).toEqual([['user', 'question']]);
    await messages.insertAssistantMessage({ conversationId: conversation.id, turnId: ahead.id, step: 1, content: 'answer' });
    await turns.finish(ahead.id, null, { status: 'completed', finishReason: 'stop' }, []);
    const begun = await turns.beginAttempt(edit.id, 'edit-job', true);
    expect(transcriptOf(begun!.history!)).toEqual([['user', 'better question']]);
    expect(transcriptOf(await messages.list(conversation.id))).toEqual([['user', 'better question']]);
    expect((await turns.get(ahead.id))?.supersededBy).toBe(edit.id);
  });

  it('completes a turn with its last step in one round trip, raises the seq floor, and names the next unfinished turn', async () => {
    const conversation = await conversations.create({ userId });
    const turn = await newTurn(conversation.id);
    const queued = await newTurn(conversation.id);
    await turns.beginAttempt(turn.id, 'job');
    const record = { step: 1, finishReason: 'stop', usage, startedAt: new Date().toISOString(), finishedAt: new Date().toISOString() };
    const endEvents = [{ type: 'turn-finish' as const, finishReason: 'stop', usage }];
    // A stale attempt changes nothing.
    expect(await turns.completeWithFinalStep(turn.id, 2, { record, content: 'answer' }, { finishReason: 'stop', endEvents, seenSeq: 5 })).toBeNull();
    const result = await turns.completeWithFinalStep(turn.id, 1, { record, content: 'answer' }, { finishReason: 'stop', endEvents, seenSeq: 7 });
    expect(result?.ended).toMatchObject({ id: turn.id, status: 'completed', finishReason: 'stop', step: 1, usage, endEvents, steps: [record] });
    // Read back from its JSON as the row reads: timestamps included.
    expect(result?.ended).toEqual(await turns.get(turn.id));
    expect((await conversations.getById(conversation.id))?.lastSeq).toBe(7);
    expect(result?.next).toEqual({ id: queued.id, conversationId: conversation.id, userId, retryAt: null, batchPriority: null, traceparent: null });
    expect((await messages.list(conversation.id)).map((message) => [message.role, message.content])).toEqual([
      ['user', 'hi'],
      ['assistant', 'answer'],
    ]);
    expect(await turns.completeWithFinalStep(turn.id, 1, { record, content: 'again' }, { finishReason: 'stop', endEvents, seenSeq: 9 })).toBeNull();
    // With no unfinished turn left, there is no next one.
    await turns.beginAttempt(queued.id, 'next-job');
    expect((await turns.completeWithFinalStep(queued.id, 1, { record, content: 'last' }, { finishReason: 'stop', endEvents, seenSeq: 9 }))?.next).toBeNull();
  });

  it('stores a tool call result once: the first settle wins', async () => {
    const conversation = await conversations.create({ userId });
    const turn = await newTurn(conversation.id);
    const base = { turnId: turn.id, conversationId: conversation.id, step: 1, name: 'calculator', kind: 'builtin', argumentsText: '{}', args: {} };
    await toolCalls.insertMany([
      { ...base, toolCallId: 'a', position: 0, status: 'pending' },
      { ...base, toolCallId: 'b', position: 1, status: 'failed', error: { code: 'invalid_arguments', message: 'bad' } },
    ]);
    expect(await toolCalls.markRunning(turn.id, 'a')).toMatchObject({ status: 'running', attempts: 1 });
    expect(await toolCalls.settle(turn.id, 'a', { status: 'succeeded', result: { value: 2 } })).toMatchObject({ status: 'succeeded' });
    expect(await toolCalls.settle(turn.id, 'a', { status: 'failed', error: { code: 'late', message: 'late' } })).toBeNull();
    expect(await toolCalls.markRunning(turn.id, 'a')).toBeNull();
    expect((await toolCalls.listForStep(turn.id, 1)).map((call) => [call.toolCallId, call.status])).toEqual([
      ['a', 'succeeded'],
      ['b', 'failed'],
    ]);
  });

  it('completes a tool phase in the take when every call has its outcome, and reads the step with the turn', async () => {
    const conversation = await conversations.create({ userId });
    const turn = await newTurn(conversation.id);
    // On its first step a turn has no calls yet.
    expect(await turns.beginAttempt(turn.id, 'start', true)).not.toHaveProperty('lastStep');
    const record = { step: 1, finishReason: 'tool_calls', usage, startedAt: new Date().toISOString(), finishedAt: new Date().toISOString() };
    const toolCall = { id: 'a', type: 'function' as const, function: { name: 'calculator', arguments: '{}' } };
    await messages.insertAssistantMessage({ conversationId: conversation.id, turnId: turn.id, step: 1, content: null, toolCalls: [toolCall] });
    const base = { turnId: turn.id, conversationId: conversation.id, step: 1, name: 'calculator', kind: 'builtin', argumentsText: '{}', args: {} };
    await toolCalls.insertMany([
      { ...base, toolCallId: 'a', position: 0, status: 'pending' },
      { ...base, toolCallId: 'b', position: 1, status: 'failed', error: { code: 'invalid_arguments', message: 'bad' } },
    ]);
    await turns.commitStep(turn.id, 1, record, true);

    // A call without its outcome: the take writes nothing, and the run reads the history itself.
    const early = await turns.beginAttempt(turn.id, 'continuation', true);
    expect(early).toMatchObject({ toolCallIds: ['a', 'b'], lastStep: { toolMessagesWritten: false, toolMessagesWrittenHere: false } });
    expect(early?.lastStep?.calls.map((call) => [call.toolCallId, call.status])).toEqual([
      ['a', 'pending'],
      ['b', 'failed'],
    ]);
    expect(early).not.toHaveProperty('history');
    await turns.setWaiting(turn.id, 1, 'tools');

    await toolCalls.settle(turn.id, 'a', { status: 'succeeded', result: { value: 2 } });
    const begun = await turns.beginAttempt(turn.id, 'continuation', true);
    expect(begun).toMatchObject({ restarted: false, lastStep: { toolMessagesWritten: false, toolMessagesWrittenHere: true } });
    expect(begun?.lastStep?.calls[0]).toMatchObject({ toolCallId: 'a', status: 'succeeded', result: { value: 2 }, finishedAt: expect.any(String) });
    const toolMessages = [
      { id: expect.any(String), role: 'tool', content: '{"value":2}', toolCallId: 'a', turnId: turn.id },
      { id: expect.any(String), role: 'tool', content: '{"error":{"code":"invalid_arguments","message":"bad"}}', toolCallId: 'b', turnId: turn.id },
    ];
    // The new tool messages come last in the history, as the table lists them.
    expect(begun?.history?.slice(-2)).toEqual(toolMessages);
    expect(begun?.history).toEqual(await messages.list(conversation.id));
    // A later take finds the phase completed before it, and writes nothing again.
    expect(await turns.beginAttempt(turn.id, 'continuation', true)).toMatchObject({ lastStep: { toolMessagesWritten: true, toolMessagesWrittenHere: false } });
    expect((await messages.list(conversation.id)).filter((message) => message.role === 'tool')).toEqual(toolMessages);
  });
});

// PostgreSQL only: PGlite is one connection, so an admission cannot be in flight while a turn ends.
describe('the end of a turn beside an admission, on PostgreSQL', () => {
  let db: Db;
  let drop: () => Promise<void>;

  beforeAll(async () => {
    ({ db, drop } = await createTestDatabase('postgres'));
  });
  afterAll(() => drop());

  it('finds the next turn an admission adds while the turn ends', async () => {
    const conversations = new ConversationsRepository(db);
    const turns = new TurnsRepository(db);
    const userId = (await new UsersRepository(db).createUserWithKey('owner')).id;
    const conversation = await conversations.create({ userId });
    const turn = await turns.insert({ conversationId: conversation.id, userId, input: 'hi', options: {}, requestHash: 'h' });
    await turns.beginAttempt(turn.id, 'job');
    const record = { step: 1, finishReason: 'stop', usage, startedAt: new Date().toISOString(), finishedAt: new Date().toISOString() };
    const endEvents = [{ type: 'turn-finish' as const, finishReason: 'stop', usage }];
    let ending: ReturnType<TurnsRepository['completeWithFinalStep']> | undefined;
    const admitted = await db.transaction(async (tx) => {
      // As admission does: the conversation's row lock, then a turn queued behind the running one.
      await conversations.lock(conversation.id, tx);
      ending = turns.completeWithFinalStep(turn.id, 1, { record, content: 'answer' }, { finishReason: 'stop', endEvents, seenSeq: 1 });
      // Until the end waits for this transaction's lock (read from another connection: a
      // transaction sees one snapshot of pg_stat_activity).
      const holder = (await tx.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]!.pid;
      await poll('the end did not wait for the admission lock', async () => {
        const { rows } = await db.query<{ waiting: number }>(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity
           WHERE $1::int = ANY(pg_blocking_pids(pid)) AND query LIKE 'SELECT complete_turn_with_final_step%'`,
          [holder],
        );
        return rows[0]!.waiting > 0;
      });
      return turns.insert({ conversationId: conversation.id, userId, input: 'next', options: {}, requestHash: 'h' }, tx);
    });
    expect((await ending)?.next?.id).toBe(admitted.id);
  });
});
