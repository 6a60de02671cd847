import { randomBytes } from 'node:crypto';
import { apiClient } from '../../support/http';
import { poll } from '../../support/poll';
import { markedScripted } from '../../support/scripted';
import { startTestStack, type TestStack } from '../../support/stack';
import { TestWsClient } from '../../support/ws-client';

/** docs/API.md, "Schedules": runs fired by the workers, one per tick. */
describe('schedules', () => {
  let stack: TestStack;
  let api: ReturnType<typeof apiClient>;
  let apiKey: string;
  const clients: TestWsClient[] = [];

  beforeAll(async () => {
    // Two workers race for every due schedule.
    stack = await startTestStack({ workers: 2 });
    apiKey = (await stack.createUser(`schedules-${randomBytes(3).toString('hex')}`)).apiKey;
    api = apiClient(stack.url, apiKey);
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await stack.close();
  });

  const subscribe = async (conversationId: string) => {
    const client = await TestWsClient.subscribed(stack.url, { apiKey }, conversationId);
    clients.push(client);
    return client;
  };
  const runsOf = async (id: string) => (await api.get(`/v1/schedules/${id}/runs?limit=100`)).body.data as any[];

  it('runs a trigger as a turn of its conversation on its agent, and refuses a bad plan with 400', async () => {
    const agent = (await api.post('/v1/agents', { name: `sched-${randomBytes(3).toString('hex')}`, instructions: 'Scheduled prompt.' })).body;
    const conversation = (await api.post('/v1/conversations', {})).body;
    const client = await subscribe(conversation.id);
    const marker = `s-${randomBytes(4).toString('hex')}`;
    const created = await api.post('/v1/schedules', {
      content: markedScripted({ text: 'scheduled' }, marker),
      conversationId: conversation.id,
      agent: agent.id,
      cron: '0 9 * * *',
      timezone: 'Europe/Paris',
    });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ id: expect.stringMatching(/^sched_/), nextRunAt: expect.any(String), overlap: 'skip', catchUp: 'one' });
    expect(new Date(created.body.nextRunAt).getUTCMinutes()).toBe(0);

    const run = await api.post(`/v1/schedules/${created.body.id}/trigger`);
    expect(run.status).toBe(201);
    expect(run.body).toMatchObject({ status: 'started', turnId: expect.any(String), conversationId: conversation.id });
    await client.waitForTurnEnd(run.body.turnId);
    const request = await stack.scripted.waitForRequest((recorded) => JSON.stringify(recorded.body).includes(marker));
    expect((request.body as any).messages[0]).toEqual({ role: 'system', content: 'Scheduled prompt.' });
    expect((await api.get(`/v1/turns/${run.body.turnId}`)).body).toMatchObject({ status: 'completed', agentId: agent.id, agentVersion: 1 });

    for (const bad of [{ every: '5s' }, { cron: '61 * * * *' }, { cron: '* * * * *', every: '1m' }, { cron: '* * * * *', timezone: 'Mars/Olympus' }]) {
      expect((await api.post('/v1/schedules', { content: 'hi', ...bad })).status).toBe(400);
    }
  });

  it('fires a due tick once with two workers racing, into a new conversation with metadata.scheduleId and source schedule', async () => {
    const marker = `t-${randomBytes(4).toString('hex')}`;
    const at = new Date(Date.now() + 1500).toISOString();
    const created = (await api.post('/v1/schedules', { content: markedScripted({ text: 'at its time' }, marker), at })).body;
    await stack.scripted.waitForRequest((recorded) => JSON.stringify(recorded.body).includes(marker), 15_000);
    const [run] = await runsOf(created.id);
    expect(run).toMatchObject({ status: 'started', scheduledFor: at });
    const conversation = (await api.get(`/v1/conversations/${run.conversationId}`)).body;
    expect(conversation.metadata).toMatchObject({ scheduleId: created.id });
    expect(conversation.source).toBe('schedule');
    expect((await api.get('/v1/conversations?source=schedule')).body.data.map((each: { id: string }) => each.id)).toContain(run.conversationId);
    // The schedule has moved on (an at has no next tick): every worker has passed over it since.
    expect((await api.get(`/v1/schedules/${created.id}`)).body.nextRunAt).toBeNull();
    expect(await runsOf(created.id)).toHaveLength(1);
    const { rows } = await stack.resources.db.query<{ n: number }>('SELECT count(*)::int AS n FROM turns WHERE conversation_id = $1', [run.conversationId]);
    expect(rows[0]!.n).toBe(1);
  });

  it('catches up missed ticks once with catchUp one, and records them skipped with catchUp skip', async () => {
    const one = (await api.post('/v1/schedules', { content: markedScripted({ text: 'caught up' }), cron: '* * * * *', enabled: false })).body;
    const skip = (await api.post('/v1/schedules', { content: markedScripted({ text: 'skipped' }), cron: '* * * * *', catchUp: 'skip', enabled: false })).body;
    // As if no worker ran for the last five minutes: the next tick was five minutes ago.
    const minute = 60_000;
    const missedFrom = new Date(Math.floor(Date.now() / minute) * minute - 5 * minute);
    await stack.resources.db.query('UPDATE schedules SET enabled = true, next_run_at = $2 WHERE id = ANY($1)', [[one.id, skip.id], missedFrom]);
    // Each pass moves a schedule's next tick past now: then the missed ticks are handled.
    const passed = (id: string) =>
      poll(`schedule ${id} still at its missed ticks`, async () => new Date((await api.get(`/v1/schedules/${id}`)).body.nextRunAt).getTime() > Date.now() - minute);
    await passed(one.id);
    await passed(skip.id);
    // One run for the ticks more than 60 s late; the one of this minute, if still on time, its own.
    const late = (run: { scheduledFor: string; startedAt: string }) => Date.parse(run.startedAt) - Date.parse(run.scheduledFor) > minute;
    const oneRuns = await runsOf(one.id);
    expect(oneRuns.filter((run) => run.status === 'started' && late(run))).toHaveLength(1);
    expect(oneRuns.filter((run) => run.status === 'started' && !late(run)).length).toBeLessThanOrEqual(1);
    expect(oneRuns.filter((run) => run.status === 'skipped')).toHaveLength(0);
    const skipRuns = await runsOf(skip.id);
    expect(skipRuns.filter((run) => run.status === 'skipped').length).toBeGreaterThanOrEqual(4);
    expect(new Set(skipRuns.map((run) => run.scheduledFor)).size).toBe(skipRuns.length);
  });

  it('skips a tick while the conversation has an active turn (overlap skip), and pauses and resumes', async () => {
    const conversation = (await api.post('/v1/conversations', {})).body;
    // A stalled stream keeps the turn running until it is cancelled.
    const marker = `o-${randomBytes(4).toString('hex')}`;
    const waiting = await api.post(`/v1/conversations/${conversation.id}/turns`, { content: markedScripted({ text: 'never ends', stallAfterTokens: 0 }, marker) });
    expect(waiting.status).toBe(202);
    const schedule = (await api.post('/v1/schedules', { content: 'hi', conversationId: conversation.id, every: '1h' })).body;
    await stack.scripted.waitForRequest((recorded) => JSON.stringify(recorded.body).includes(marker));
    const run = (await api.post(`/v1/schedules/${schedule.id}/trigger`)).body;
    expect(run).toMatchObject({ status: 'skipped', reason: expect.stringContaining('active') });
    await api.post(`/v1/turns/${waiting.body.turnId}/cancel`);

    const paused = (await api.patch(`/v1/schedules/${schedule.id}`, { enabled: false })).body;
    expect(paused).toMatchObject({ enabled: false, nextRunAt: null });
    const resumed = (await api.patch(`/v1/schedules/${schedule.id}`, { enabled: true })).body;
    expect(new Date(resumed.nextRunAt).getTime()).toBeGreaterThan(Date.now());
    expect((await api.delete(`/v1/schedules/${schedule.id}`)).status).toBe(204);
    expect((await api.get(`/v1/schedules/${schedule.id}`)).status).toBe(404);
  });

  it('changes the plan by PATCH: validated as on create, nextRunAt afresh, a claimed tick of the old plan not run again', async () => {
    const marker = `r-${randomBytes(4).toString('hex')}`;
    const created = (await api.post('/v1/schedules', { content: markedScripted({ text: 'replanned' }, marker), cron: '0 9 * * *' })).body;
    const patch = (body: unknown) => api.patch(`/v1/schedules/${created.id}`, body);
    for (const bad of [{ every: '5s' }, { cron: '61 * * * *' }, { cron: '* * * * *', every: '1m' }, { timezone: 'Mars/Olympus' }]) {
      expect((await patch(bad)).status).toBe(400);
    }
    // In Paris, 09:00 local is 07:00 or 08:00 UTC.
    const paris = (await patch({ timezone: 'Europe/Paris' })).body;
    expect(paris).toMatchObject({ cron: '0 9 * * *', timezone: 'Europe/Paris' });
    expect([7, 8]).toContain(new Date(paris.nextRunAt).getUTCHours());
    // A cron a zone refuses is refused against the zone it will have: here the one it has.
    expect((await patch({ cron: '0 25 * * *' })).status).toBe(400);

    // A worker holds a claim on a due tick of the old plan when the plan changes.
    const stale = new Date(Date.now() - 5000);
    await stack.resources.db.query("UPDATE schedules SET next_run_at = $2, claimed_until = now() + interval '1 hour' WHERE id = $1", [created.id, stale]);
    const startAt = new Date(Math.ceil((Date.now() + 1500) / 1000) * 1000);
    const replanned = await patch({ every: '10s', startAt: startAt.toISOString() });
    expect(replanned.status).toBe(200);
    expect(replanned.body).toMatchObject({ cron: null, every: '10s', startAt: startAt.toISOString(), nextRunAt: startAt.toISOString() });
    // That worker moving the schedule on from the tick it claimed changes nothing now.
    await stack.resources.schedules.advanceAll([{ id: created.id, claimedRunAt: stale, nextRunAt: new Date(Date.now() + 3_600_000) }]);
    expect((await api.get(`/v1/schedules/${created.id}`)).body.nextRunAt).toBe(startAt.toISOString());
    // The new plan's first tick runs on time, not behind the old claim; the old tick does not run here.
    await stack.scripted.waitForRequest((recorded) => JSON.stringify(recorded.body).includes(marker), 15_000);
    await poll('the first tick has no run', async () => (await runsOf(created.id)).length > 0);
    expect((await runsOf(created.id)).map((run) => run.scheduledFor)).toEqual([startAt.toISOString()]);
    await poll('the schedule did not move on', async () => (await api.get(`/v1/schedules/${created.id}`)).body.nextRunAt === new Date(startAt.getTime() + 10_000).toISOString());
    expect((await api.delete(`/v1/schedules/${created.id}`)).status).toBe(204);
  });

  it('queues one run behind an active turn with overlap enqueue, and cancels the active turn with interrupt', async () => {
    const stalled = async () => {
      const conversation = (await api.post('/v1/conversations', {})).body;
      const marker = `p-${randomBytes(4).toString('hex')}`;
      const active = await api.post(`/v1/conversations/${conversation.id}/turns`, { content: markedScripted({ text: 'never ends', stallAfterTokens: 0 }, marker) });
      await stack.scripted.waitForRequest((recorded) => JSON.stringify(recorded.body).includes(marker));
      return { conversationId: conversation.id as string, turnId: active.body.turnId as string };
    };

    const first = await stalled();
    const enqueue = (await api.post('/v1/schedules', { content: 'after it', conversationId: first.conversationId, every: '1h', overlap: 'enqueue' })).body;
    const queued = (await api.post(`/v1/schedules/${enqueue.id}/trigger`)).body;
    expect(queued).toMatchObject({ status: 'started', turnId: expect.any(String) });
    expect((await api.get(`/v1/turns/${queued.turnId}`)).body.status).toBe('queued');
    expect((await api.post(`/v1/schedules/${enqueue.id}/trigger`)).body).toMatchObject({ status: 'skipped', reason: expect.stringContaining('queued') });
    await api.post(`/v1/turns/${queued.turnId}/cancel`);
    await api.post(`/v1/turns/${first.turnId}/cancel`);

    const second = await stalled();
    const interrupt = (await api.post('/v1/schedules', { content: 'instead', conversationId: second.conversationId, every: '1h', overlap: 'interrupt' })).body;
    const run = (await api.post(`/v1/schedules/${interrupt.id}/trigger`)).body;
    expect(run).toMatchObject({ status: 'started' });
    expect((await api.get(`/v1/turns/${second.turnId}`)).body).toMatchObject({ status: 'cancelled', finishReason: 'interrupted' });
  });
});
