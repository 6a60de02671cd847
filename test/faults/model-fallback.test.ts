import { randomBytes } from 'node:crypto';
import { faultProcesses } from '../support/fault-processes';
import { apiClient } from '../support/http';
import { checkInvariants } from '../support/invariants';
import { poll } from '../support/poll';
import { markedScripted } from '../support/scripted';
import { requestsWith, startTwoProviderStack, type TwoProviderStack } from '../support/two-providers';
import { TestWsClient } from '../support/ws-client';
import type { Fault } from '../../src/scripted-model/scripted-model-server';

/**
 * docs/RELIABILITY.md case 46: the first target of a model refuses, hangs or breaks mid-stream
 * while 100 turns run; every turn completes on the second, each discarded attempt announced, no
 * tool run twice, and the first cooling down for every process. Then a worker SIGKILLed while a
 * step that fell back streams on the second target.
 */

/** Every event of a conversation, from the replay log. */
async function loggedEvents(two: TwoProviderStack, conversationId: string): Promise<any[]> {
  const { events } = await two.stack.resources.eventLog.read(conversationId, 0);
  return events.map((event) => JSON.parse(event.json));
}

describe('100 turns in flight with the first target dead (case 46)', () => {
  let two: TwoProviderStack;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    two = await startTwoProviderStack({ workers: 2, providers: { first: { timeoutMs: 1500 } } });
    api = apiClient(two.stack.url, (await two.stack.createUser('case-46')).apiKey);
  }, 60_000);
  afterEach(async () => {
    two.first.setFault(null);
    await two.healTargets();
  });
  afterAll(() => two.close());

  const TURNS = 100;
  // A tool step first: a call the model made is run once, whatever the step's fallbacks.
  const scenario = {
    steps: [
      { toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }], text: 'Working it out.' },
      { text: 'It is 42, as the calculator says.', tokenDelayMs: 2 },
    ],
  };

  it.each([
    ['refuses with 503', { refuse: { status: 503 } }],
    ['refuses with 429', { refuse: { status: 429, retryAfterSeconds: 30 } }],
    ['hangs', { hang: true }],
    ['breaks mid-stream', { cutAfterTokens: 2 }],
  ] as [string, Fault][])(
    'every turn completes on the second target when the first %s',
    async (_name, fault) => {
      two.first.setFault(fault);
      const marker = `c46-${randomBytes(4).toString('hex')}`;
      const turns = await Promise.all(
        Array.from({ length: TURNS }, async () => {
          const conversation = await api.post('/v1/conversations', {});
          const posted = await api.post(`/v1/conversations/${conversation.body.id}/turns`, { content: markedScripted(scenario, marker) });
          expect(posted.status).toBe(202);
          return { turnId: posted.body.turnId as string, conversationId: conversation.body.id as string };
        }),
      );
      const turnIds = turns.map((turn) => turn.turnId);
      await poll(
        'not every turn ended',
        async () => {
          const { rows } = await two.stack.resources.db.query<{ count: string }>(
            `SELECT count(*) AS count FROM turns WHERE id = ANY($1) AND status IN ('completed', 'failed', 'cancelled')`,
            [turnIds],
          );
          return Number(rows[0]!.count) === TURNS;
        },
        90_000,
      );
      // A turn's end is committed before it is announced: read the log once every turn's end is in it.
      let events: any[] = [];
      await poll('not every turn announced its end', async () => {
        events = (await Promise.all(turns.map((turn) => loggedEvents(two, turn.conversationId)))).flat();
        const ended = new Set(events.filter((event) => event.type === 'turn-finish' || event.type === 'turn-error').map((event) => event.turnId));
        return turnIds.every((turnId) => ended.has(turnId));
      });
      // Completed, one assistant message per step, what a client shows is what is stored (every
      // discarded attempt was announced, or a client would show its text glued to the next).
      const statuses = await checkInvariants(two.stack.resources.db, { turnIds, toolExecutions: [], events });
      expect(Object.values(statuses).every((status) => status === 'completed')).toBe(true);
      const { rows: calls } = await two.stack.resources.db.query<{ turn_id: string; attempts: number }>('SELECT turn_id, attempts FROM tool_calls WHERE turn_id = ANY($1)', [
        turnIds,
      ]);
      expect(calls).toHaveLength(TURNS);
      expect(calls.every((call) => call.attempts === 1)).toBe(true);
      expect(events.filter((event) => event.type === 'tool-result')).toHaveLength(TURNS);
      for (const turnId of turnIds) {
        const ofTurn = events.filter((event) => event.turnId === turnId);
        const discards = ofTurn.filter((event) => event.type === 'attempt-discarded').length;
        const restartsAfterOutput = ofTurn.filter((event, index) => event.type === 'provider-fallback' && ofTurn[index - 1]?.type === 'attempt-discarded').length;
        // Each discard within a run was followed by its fallback.
        expect([turnId, discards]).toEqual([turnId, restartsAfterOutput]);
      }
      // Once the first target failed it cooled down for every turn: the requests already sent to it
      // before it failed (at most one per turn in flight) were all it got, but for the one probe
      // each time a cooldown ended. No follow-up step (after the tool's result) went to it otherwise.
      const askedFirst = requestsWith(two.first, marker);
      const followUps = askedFirst.filter((request) => JSON.stringify(request.body).includes('"role":"tool"'));
      expect(askedFirst.length - followUps.length).toBeLessThanOrEqual(TURNS);
      expect(followUps.length).toBeLessThanOrEqual(5);
      if (fault.cutAfterTokens !== undefined) expect(events.some((event) => event.type === 'attempt-discarded')).toBe(true);
      const listed = (await api.get('/v1/models')).body.data.find((model: any) => model.name === 'duo');
      expect(listed.targets[1]).toEqual({ provider: 'second', model: 'scripted', state: 'ok' });
    },
    180_000,
  );
});

describe('cooldowns seen by another process', () => {
  let two: TwoProviderStack;
  const processes = faultProcesses(() => two.stack);

  beforeAll(async () => {
    // Long enough that the cooldown outlives the test.
    two = await startTwoProviderStack({ workers: 1, env: { PROVIDER_COOLDOWN_BASE_MS: '120000' } });
  });
  afterAll(async () => {
    await processes.stopAll();
    await two.close();
  });

  it('a target one worker found failing is passed over by a worker process that never asked it, and shown cooling down by another API process', async () => {
    const { apiKey } = await two.stack.createUser('cooldown-sharing');
    const api = apiClient(two.stack.url, apiKey);
    two.first.setFault({ refuse: { status: 503 }, times: 1 });
    const conversation = await api.post('/v1/conversations', {});
    const client = await TestWsClient.subscribed(two.stack.url, { apiKey }, conversation.body.id);
    const firstTurn = await api.post(`/v1/conversations/${conversation.body.id}/turns`, { content: markedScripted({ text: 'one' }) });
    await client.waitForTurnEnd(firstTurn.body.turnId);

    // Only a worker process of its own runs turns from now on; the first provider would answer now.
    const worker = await processes.spawn('worker');
    await two.stack.stopWorker(two.stack.workers[0]!);
    const marker = `shared-${randomBytes(4).toString('hex')}`;
    const next = await api.post(`/v1/conversations/${conversation.body.id}/turns`, { content: markedScripted({ text: 'two' }, marker) });
    const events = (await client.waitForTurnEnd(next.body.turnId, 20_000)).filter((event) => event.turnId === next.body.turnId);
    await worker.waitForLog((entry) => entry.msg === 'turn ended' && entry.turnId === next.body.turnId);
    expect(events.at(-1).type).toBe('turn-finish');
    expect(requestsWith(two.first, marker)).toEqual([]);
    expect(requestsWith(two.second, marker)).toHaveLength(1);
    expect(events.filter((event) => event.type === 'provider-fallback')).toEqual([]);

    const otherApi = await processes.spawn('api');
    const listed = await apiClient(otherApi.url, apiKey).get('/v1/models');
    expect(listed.body.data[0].targets[0]).toMatchObject({ provider: 'first', state: 'cooling_down' });
    client.close();
  }, 60_000);
});

describe('a worker SIGKILLed mid-fallback', () => {
  let two: TwoProviderStack;
  const processes = faultProcesses(() => two.stack);

  beforeAll(async () => {
    two = await startTwoProviderStack({ workers: 0 });
  });
  afterAll(async () => {
    await processes.stopAll();
    await two.close();
  });

  it('the turn completes on another worker, the killed attempt discarded, the text stored and shown once', async () => {
    const { apiKey } = await two.stack.createUser('kill-mid-fallback');
    const api = apiClient(two.stack.url, apiKey);
    const worker = await processes.spawn('worker');
    two.first.setFault({ cutAfterTokens: 3 });
    const conversation = await api.post('/v1/conversations', {});
    const client = await TestWsClient.subscribed(two.stack.url, { apiKey }, conversation.body.id);
    // Long on the second target, so that the worker dies while it streams there.
    const posted = await api.post(`/v1/conversations/${conversation.body.id}/turns`, { content: markedScripted({ tokens: 300, tokenDelayMs: 10 }) });
    const turnId = posted.body.turnId as string;
    await client.waitFor((frame) => frame.type === 'event' && frame.event.turnId === turnId && frame.event.type === 'provider-fallback');
    await client.waitFor(
      (frame) =>
        frame.type === 'event' &&
        frame.event.turnId === turnId &&
        frame.event.type === 'text-delta' &&
        client.events().some((event) => event.type === 'provider-fallback' && event.seq < frame.event.seq),
    );
    await worker.kill('SIGKILL');
    two.first.setFault(null);
    await processes.addWorker();
    const events = (await client.waitForTurnEnd(turnId, 60_000)).filter((event) => event.turnId === turnId);
    expect(events.at(-1).type).toBe('turn-finish');
    expect(events.filter((event) => event.type === 'turn-start').map((event) => event.attempt)).toEqual([1, 2]);
    // The fallback's discard within attempt 1, then the killed attempt's discard when attempt 2 began.
    expect(events.filter((event) => event.type === 'attempt-discarded').map((event) => event.attempt)).toEqual([1, 1]);
    await checkInvariants(two.stack.resources.db, { turnIds: [turnId], toolExecutions: [], events });
    const turn = (await api.get(`/v1/turns/${turnId}`)).body;
    expect(turn.providerCalls.map((call: any) => [call.attempt, call.provider, call.outcome])).toEqual(
      expect.arrayContaining([
        [1, 'first', 'discarded'],
        [2, expect.any(String), 'ok'],
      ]),
    );
    client.close();
  }, 90_000);
});
