import { randomBytes } from 'node:crypto';
import { visibleStepTexts } from '../../support/client-view';
import { apiClient } from '../../support/http';
import { checkInvariants } from '../../support/invariants';
import { poll } from '../../support/poll';
import { markedScripted } from '../../support/scripted';
import { requestsWith, startTwoProviderStack, type TwoProviderStack } from '../../support/two-providers';
import { TestWsClient } from '../../support/ws-client';

/** docs/API.md, "Models and providers": a step that fails on its model's first target goes on to the next. */
describe('fallback between two providers', () => {
  let two: TwoProviderStack;
  let api: ReturnType<typeof apiClient>;
  let apiKey: string;
  const clients: TestWsClient[] = [];
  const TEXT = 'The second provider answers the whole text, once, whatever the first did.';

  beforeAll(async () => {
    two = await startTwoProviderStack({
      // `first` gives up on a silent stream sooner than the default: a hang costs this once.
      providers: { first: { timeoutMs: 1500 } },
      env: { PROVIDER_RETRY_BASE_MS: '20', PROVIDER_COOLDOWN_BASE_MS: '1000' },
    });
    apiKey = (await two.stack.createUser('fallback')).apiKey;
    api = apiClient(two.stack.url, apiKey);
  });
  afterEach(async () => {
    two.first.setFault(null);
    two.second.setFault(null);
    await two.healTargets();
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await two.close();
  });

  async function runTurn(scenario: unknown, body: Record<string, unknown> = {}) {
    const created = await api.post('/v1/conversations', {});
    const conversationId = created.body.id as string;
    const client = await TestWsClient.subscribed(two.stack.url, { apiKey }, conversationId);
    clients.push(client);
    const marker = `run-${randomBytes(6).toString('hex')}`;
    const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content: markedScripted(scenario, marker), ...body });
    expect(posted.status).toBe(202);
    const events = (await client.waitForTurnEnd(posted.body.turnId)).filter((event) => event.turnId === posted.body.turnId);
    const turn = (await api.get(`/v1/turns/${posted.body.turnId}`)).body;
    return { turnId: posted.body.turnId as string, conversationId, marker, events, turn };
  }
  const typesOf = (events: any[]) => events.map((event) => event.type).filter((type) => type !== 'text-delta');
  const FIRST = { provider: 'first', model: 'scripted' };
  const SECOND = { provider: 'second', model: 'scripted' };

  it('lists the models with their targets, all ok', async () => {
    const listed = await api.get('/v1/models');
    expect(listed.status).toBe(200);
    expect(listed.body.defaultModel).toBe('duo');
    expect(listed.body.data.map((model: any) => model.name)).toEqual(['duo', 'solo', 'wide']);
    expect(listed.body.data[0]).toEqual({
      name: 'duo',
      contextWindow: null,
      price: null,
      targets: [
        { ...FIRST, state: 'ok' },
        { ...SECOND, state: 'ok' },
      ],
    });
    expect(listed.body.data[2].contextWindow).toBe(1000);
  });

  it.each([
    ['a 503', { refuse: { status: 503 } }, 'server'],
    ['a 429', { refuse: { status: 429 } }, 'rate_limited'],
    ['a hang before any header', { hang: true }, 'idle_timeout'],
  ] as const)('goes on to the next target at once after %s, and the first cools down for the next turns', async (_name, fault, reason) => {
    two.first.setFault(fault);
    const run = await runTurn({ text: TEXT });
    expect(typesOf(run.events)).toEqual(['turn-start', 'step-start', 'provider-fallback', 'step-finish', 'turn-finish']);
    expect(run.events.find((event) => event.type === 'provider-fallback')).toMatchObject({ step: 1, from: FIRST, to: SECOND, reason });
    expect(visibleStepTexts(run.events).get(1)).toBe(TEXT);
    expect(run.turn).toMatchObject({ status: 'completed', attempt: 1, providerRetries: 0 });
    expect(run.turn.providerCalls).toEqual([
      expect.objectContaining({ step: 1, attempt: 1, ...FIRST, outcome: 'failed', error: expect.objectContaining({ code: reason }) }),
      expect.objectContaining({ step: 1, attempt: 1, ...SECOND, outcome: 'ok', usage: expect.objectContaining({ completionTokens: expect.any(Number) }) }),
    ]);
    expect(new Set(run.turn.providerCalls.map((call: any) => call.id)).size).toBe(2);

    const listed = await api.get('/v1/models');
    const duo = listed.body.data.find((model: any) => model.name === 'duo');
    expect(duo.targets[0]).toMatchObject({ ...FIRST, state: 'cooling_down', until: expect.any(String) });
    expect(duo.targets[1]).toEqual({ ...SECOND, state: 'ok' });

    // The next turn does not ask the first provider while it cools down: no second timeout, no event.
    const next = await runTurn({ text: 'next' });
    expect(requestsWith(two.first, next.marker)).toEqual([]);
    expect(typesOf(next.events)).toEqual(['turn-start', 'step-start', 'step-finish', 'turn-finish']);
    await expect(checkInvariants(two.stack.resources.db, { turnIds: [run.turnId, next.turnId], toolExecutions: [], events: [...run.events, ...next.events] })).resolves.toEqual({
      [run.turnId]: 'completed',
      [next.turnId]: 'completed',
    });
  });

  it('honours a Retry-After for the cooldown', async () => {
    two.first.setFault({ refuse: { status: 429, retryAfterSeconds: 120 } });
    const before = Date.now();
    await runTurn({ text: TEXT });
    const duo = (await api.get('/v1/models')).body.data.find((model: any) => model.name === 'duo');
    expect(Date.parse(duo.targets[0].until)).toBeGreaterThanOrEqual(before + 119_000);
  });

  it('restarts a step whose stream broke after output on the next target: attempt-discarded, provider-fallback, the text once', async () => {
    two.first.setFault({ cutAfterTokens: 3 });
    const run = await runTurn({ text: TEXT });
    expect(typesOf(run.events)).toEqual(['turn-start', 'step-start', 'attempt-discarded', 'provider-fallback', 'step-start', 'step-finish', 'turn-finish']);
    expect(run.events.find((event) => event.type === 'attempt-discarded')).toMatchObject({ attempt: 1, step: 1 });
    const discardAt = run.events.findIndex((event) => event.type === 'attempt-discarded');
    const shown = run.events
      .slice(0, discardAt)
      .filter((event) => event.type === 'text-delta')
      .map((event) => event.delta)
      .join('');
    expect(shown.length).toBeGreaterThan(0);
    expect(TEXT.startsWith(shown) && shown !== TEXT).toBe(true);
    expect(visibleStepTexts(run.events)).toEqual(new Map([[1, TEXT]]));
    expect(run.turn.providerCalls.map((call: any) => [call.provider, call.outcome])).toEqual([
      ['first', 'discarded'],
      ['second', 'ok'],
    ]);
    await expect(checkInvariants(two.stack.resources.db, { turnIds: [run.turnId], toolExecutions: [], events: run.events })).resolves.toEqual({ [run.turnId]: 'completed' });
  });

  it('does not run a tool twice when the step that called it breaks and restarts elsewhere', async () => {
    two.first.setFault({ cutAfterTokens: 2, times: 1 });
    const run = await runTurn({ steps: [{ toolCalls: [{ name: 'calculator', arguments: { expression: '6*7' } }] }, { text: 'It is 42.' }] });
    expect(run.turn.status).toBe('completed');
    expect(run.turn.toolCalls).toEqual([expect.objectContaining({ toolName: 'calculator', status: 'succeeded', attempts: 1 })]);
    expect(run.events.filter((event) => event.type === 'tool-result')).toHaveLength(1);
    await checkInvariants(two.stack.resources.db, { turnIds: [run.turnId], toolExecutions: [], events: run.events });
  });

  it('sends a request too long for a target to the next one with a larger window, else fails context_length_exceeded', async () => {
    two.first.setFault({ refuse: { status: 400, code: 'context_length_exceeded', message: "This model's maximum context length is 1000 tokens." } });
    const wide = await runTurn({ text: TEXT }, { model: 'wide' });
    expect(wide.events.find((event) => event.type === 'provider-fallback')).toMatchObject({ from: FIRST, to: SECOND, reason: 'context_length_exceeded' });
    expect(wide.turn.status).toBe('completed');
    // A too-long request is no provider failure: the first does not cool down.
    expect((await api.get('/v1/models')).body.data[0].targets[0].state).toBe('ok');

    // duo's second target has no larger window: nothing takes it.
    const duo = await runTurn({ text: TEXT });
    expect(duo.events.at(-1)).toMatchObject({ type: 'turn-error', error: { code: 'context_length_exceeded' } });
    expect(requestsWith(two.second, duo.marker)).toEqual([]);
  });

  it('fails a turn the first provider refuses with another 4xx, naming it, and asks no other', async () => {
    two.first.setFault({ refuse: { status: 401, message: 'Incorrect API key provided' } });
    const run = await runTurn({ text: TEXT });
    expect(typesOf(run.events)).toEqual(['turn-start', 'step-start', 'turn-error']);
    expect(run.events.at(-1).error.code).toBe('provider_error');
    expect(run.events.at(-1).error.message).toContain('provider "first"');
    expect(run.events.at(-1).error.message).toContain('Incorrect API key provided');
    expect(requestsWith(two.second, run.marker)).toEqual([]);
  });

  it('waits under the retry rules while every target cools down, then probes them in order and completes on the one that answers', async () => {
    two.first.setFault({ refuse: { status: 503 } });
    two.second.setFault({ refuse: { status: 503 }, times: 1 });
    const run = await runTurn({ text: TEXT });
    // The second's cooldown began a few ms after the first's (its request came after the first
    // failed), so it ends as many ms later. The wait is for the soonest (the first's): when the
    // first's probe fails sooner than that gap, the second is still cooling for those few ms and
    // the step waits once more, for its remainder, before the second's probe answers.
    const secondStillCooling = run.events.filter((event) => event.type === 'provider-retry').length === 2;
    expect(typesOf(run.events)).toEqual([
      'turn-start',
      'step-start',
      'provider-fallback',
      'provider-retry',
      'turn-start',
      'step-start',
      ...(secondStillCooling ? ['provider-retry', 'turn-start', 'step-start'] : ['provider-fallback']),
      'step-finish',
      'turn-finish',
    ]);
    const [wait, remainder] = run.events.filter((event) => event.type === 'provider-retry');
    // The wait is the soonest cooldown's (1 s), not the retry backoff's (20 ms); a second wait, the
    // second target's remainder, no more than the gap between the two cooldowns' starts.
    expect(wait.retryInMs).toBeGreaterThan(500);
    if (remainder) expect(remainder.retryInMs).toBeLessThan(wait.retryInMs);
    expect(run.turn).toMatchObject({ status: 'completed', attempt: secondStillCooling ? 3 : 2, providerRetries: secondStillCooling ? 2 : 1 });
    expect(run.turn.providerCalls.map((call: any) => [call.attempt, call.provider, call.outcome])).toEqual([
      [1, 'first', 'failed'],
      [1, 'second', 'failed'],
      // The first's cooldown ended first: it is probed first and fails again; the second's probe answers.
      [2, 'first', 'failed'],
      [secondStillCooling ? 3 : 2, 'second', 'ok'],
    ]);
    const duo = (await api.get('/v1/models')).body.data[0];
    expect(duo.targets.map((target: any) => target.state)).toEqual(['cooling_down', 'ok']);
  });

  it('probes a target once its cooldown ended, and a probe that answers heals it', async () => {
    two.first.setFault({ refuse: { status: 503 }, times: 1 });
    await runTurn({ text: 'cools the first down' });
    await poll('the first target never came back', async () => (await api.get('/v1/models')).body.data[0].targets[0].state === 'ok', 5_000);
    const probe = await runTurn({ text: TEXT });
    expect(requestsWith(two.first, probe.marker)).toHaveLength(1);
    expect(probe.turn.providerCalls).toEqual([expect.objectContaining({ ...FIRST, outcome: 'ok' })]);
    expect(await two.stack.resources.redis.hget(`${two.stack.config.REDIS_PREFIX}:model-targets`, 'first/scripted')).toBeNull();
  });

  it('refuses a model that is none of the file, naming the models there are', async () => {
    const created = await api.post('/v1/conversations', { model: 'gpt-5' });
    expect(created.status).toBe(400);
    expect(created.body.error.message).toBe('no model "gpt-5": the models are duo, solo, wide');
    expect(created.body.error.details).toEqual([{ field: 'model', message: created.body.error.message }]);
    const conversation = await api.post('/v1/conversations', {});
    const posted = await api.post(`/v1/conversations/${conversation.body.id}/turns`, { content: 'hi', model: 'first/scripted' });
    expect(posted.status).toBe(400);
  });
});
