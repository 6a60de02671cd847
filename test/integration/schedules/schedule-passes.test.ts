import { randomBytes } from 'node:crypto';
import { apiClient } from '../../support/http';
import { poll } from '../../support/poll';
import { markedScripted } from '../../support/scripted';
import { startTestStack, type TestStack } from '../../support/stack';

/** A pass fires its schedules several at once (src/schedules/schedule-runner.ts): what that keeps. */
describe('schedule passes', () => {
  const dueAt = (ms: number) => new Date(Math.ceil((Date.now() + ms) / 1000) * 1000).toISOString();

  describe('with two workers racing', () => {
    let stack: TestStack;
    let api: ReturnType<typeof apiClient>;
    beforeAll(async () => {
      stack = await startTestStack({ workers: 2 });
      api = apiClient(stack.url, (await stack.createUser(`passes-${randomBytes(3).toString('hex')}`)).apiKey);
    });
    afterAll(() => stack.close());

    it('makes one run and one turn for each of 60 ticks due at once', async () => {
      const at = dueAt(4000);
      const ids: string[] = [];
      for (let made = 0; made < 60; made += 20) {
        const created = await Promise.all(Array.from({ length: 20 }, () => api.post('/v1/schedules', { content: markedScripted({ text: 'at once' }), at })));
        for (const response of created) {
          expect(response.status).toBe(201);
          ids.push(response.body.id);
        }
      }
      // An `at` has no tick after its one: moved on to none once its tick is handled.
      await poll(
        'not every schedule was moved on past its tick',
        async () => (await stack.resources.db.query('SELECT 1 FROM schedules WHERE id = ANY($1) AND next_run_at IS NOT NULL', [ids])).rows.length === 0,
        30_000,
      );
      const { rows: runs } = await stack.resources.db.query<{ schedule_id: string; status: string; conversation_id: string }>(
        'SELECT schedule_id, status, conversation_id FROM schedule_runs WHERE schedule_id = ANY($1)',
        [ids],
      );
      expect(runs).toHaveLength(60);
      expect(new Set(runs.map((run) => run.schedule_id)).size).toBe(60);
      expect(runs.every((run) => run.status === 'started')).toBe(true);
      const { rows: turns } = await stack.resources.db.query<{ conversation_id: string }>('SELECT conversation_id FROM turns WHERE conversation_id = ANY($1)', [
        runs.map((run) => run.conversation_id),
      ]);
      expect(turns.map((turn) => turn.conversation_id).sort()).toEqual(runs.map((run) => run.conversation_id).sort());
    });
  });

  describe('on one worker', () => {
    let stack: TestStack;
    let api: ReturnType<typeof apiClient>;
    beforeAll(async () => {
      stack = await startTestStack({ workers: 1 });
      api = apiClient(stack.url, (await stack.createUser(`lanes-${randomBytes(3).toString('hex')}`)).apiKey);
    });
    afterAll(() => stack.close());

    it('fires the schedules of one conversation one after another: the second sees the turn of the first (overlap skip)', async () => {
      const conversation = (await api.post('/v1/conversations', {})).body;
      const at = dueAt(2500);
      // A stalled stream keeps the first run's turn active.
      const content = markedScripted({ text: 'never ends', stallAfterTokens: 0 });
      const ids: string[] = [];
      for (let k = 0; k < 2; k++) ids.push((await api.post('/v1/schedules', { content, conversationId: conversation.id, at, overlap: 'skip' })).body.id);
      await poll(
        'the two ticks have no runs',
        async () => (await stack.resources.db.query('SELECT 1 FROM schedule_runs WHERE schedule_id = ANY($1)', [ids])).rows.length === 2,
        15_000,
      );
      const { rows } = await stack.resources.db.query<{ status: string; reason: string | null; turn_id: string | null }>(
        'SELECT status, reason, turn_id FROM schedule_runs WHERE schedule_id = ANY($1) ORDER BY started_at',
        [ids],
      );
      expect(rows.map((run) => run.status)).toEqual(['started', 'skipped']);
      expect(rows[1]!.reason).toContain('a turn is active');
      await api.post(`/v1/turns/${rows[0]!.turn_id}/cancel`);
    });
  });
});
