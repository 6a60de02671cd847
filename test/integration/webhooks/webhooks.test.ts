import { Webhook } from 'standardwebhooks';
import { apiClient } from '../../support/http';
import { scripted } from '../../support/scripted';
import { startToolTurnHarness, type ToolTurnHarness } from '../../support/tool-turns';
import { TestWsClient } from '../../support/ws-client';
import { WebhookReceiver, type ReceivedWebhook } from '../../support/webhook-receiver';
import { WebhookJobs } from '../../support/webhook-jobs';
import { startTestStack, type TestStack } from '../../support/stack';

/**
 * Long enough that a redeliver posted while an attempt hangs lands before that attempt times out
 * on a busy machine too (two tests wait it out once each).
 */
const ATTEMPT_TIMEOUT_MS = 3000;
const MAX_ENDPOINTS = 3;

/** Verifies as a receiver would, with the Standard Webhooks library; returns the payload. */
const verify = (secret: string, webhook: ReceivedWebhook) => new Webhook(secret).verify(webhook.body, webhook.headers) as any;

describe('webhooks', () => {
  let harness: ToolTurnHarness;
  let stack: TestStack;
  let jobs: WebhookJobs;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    harness = await startToolTurnHarness({
      toolFiles: { 'client.json': { tools: [{ kind: 'client', name: 'confirm', description: 'Asks the user', timeoutMs: 60_000 }] } },
      env: {
        WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
        WEBHOOK_RETRY_DELAYS_MS: '100,200',
        WEBHOOK_TIMEOUT_MS: String(ATTEMPT_TIMEOUT_MS),
        WEBHOOK_RELAY_INTERVAL_MS: '100',
        WEBHOOK_DISABLE_AFTER_MS: '1500',
        APPROVAL_REQUIRED_TOOLS: 'random_number',
        WEBHOOK_MAX_ENDPOINTS_PER_USER: String(MAX_ENDPOINTS),
      },
    });
    stack = harness.stack;
    jobs = await WebhookJobs.follow(stack);
  });
  afterAll(async () => {
    await jobs.close();
    await harness.close();
    for (const receiver of receivers) await receiver.close();
  });

  async function receiver(answers?: Parameters<typeof WebhookReceiver.start>[0]) {
    const started = await WebhookReceiver.start(answers);
    receivers.push(started);
    return started;
  }

  /** The endpoint's only delivery once its job is done (`times`: after that many runs). */
  async function settledDelivery(api: ReturnType<typeof apiClient>, endpointId: string, times = 1): Promise<any> {
    const [pending] = (await api.get(`/v1/webhooks/${endpointId}/deliveries`)).body.data;
    await jobs.completed(pending.id, times);
    return (await api.get(`/v1/webhooks/${endpointId}/deliveries`)).body.data[0];
  }

  /** A user of its own (its endpoints see only its events), with helpers. */
  async function newUser() {
    const { apiKey } = await stack.createUser('webhook-user');
    const api = apiClient(stack.url, apiKey);
    return {
      api,
      async register(url: string, events: string[] = ['*']) {
        const created = await api.post('/v1/webhooks', { url, events });
        expect(created.status).toBe(201);
        return created.body as { id: string; secret: string };
      },
      /** Runs a turn to its end; returns its id and its last event. */
      async runTurn(scenario: unknown) {
        const conversationId = (await api.post('/v1/conversations', {})).body.id as string;
        const client = await TestWsClient.subscribed(stack.url, { apiKey }, conversationId);
        const posted = await api.post(`/v1/conversations/${conversationId}/turns`, { content: scripted(scenario) });
        expect(posted.status).toBe(202);
        const events = await client.waitForTurnEnd(posted.body.turnId);
        client.close();
        return { turnId: posted.body.turnId as string, conversationId, last: events.at(-1) };
      },
    };
  }

  it('delivers turn.completed signed the Standard Webhooks way, and logs the delivery', async () => {
    const hook = await receiver();
    const user = await newUser();
    const endpoint = await user.register(hook.url(), ['turn.completed']);
    expect(endpoint.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);
    const listed = (await user.api.get('/v1/webhooks')).body.data;
    expect(listed).toEqual([expect.objectContaining({ id: endpoint.id, events: ['turn.completed'], disabledAt: null })]);
    expect(JSON.stringify(listed)).not.toContain(endpoint.secret);

    const turn = await user.runTurn({ text: 'hello there' });
    const [webhook] = await hook.waitFor(1);
    const payload = verify(endpoint.secret, webhook!);
    // The turn's usage is the ledger's, as its view shows it: its cost and token details too.
    const view = (await user.api.get(`/v1/turns/${turn.turnId}`)).body;
    expect(view.usage).toMatchObject(turn.last.usage);
    expect(payload).toEqual({
      id: webhook!.headers['webhook-id'],
      type: 'turn.completed',
      createdAt: expect.any(String),
      data: { turnId: turn.turnId, conversationId: turn.conversationId, status: 'completed', finishReason: 'stop', usage: view.usage, lastSeq: turn.last.seq },
    });
    expect(Object.keys(payload)).toEqual(['id', 'type', 'createdAt', 'data']);

    // Once the delivery's job is done, the log shows it delivered.
    await settledDelivery(user.api, endpoint.id);
    const log = await user.api.get(`/v1/webhooks/${endpoint.id}/deliveries`);
    expect(log.status).toBe(200);
    expect(log.body).toEqual({
      data: [expect.objectContaining({ eventId: payload.id, type: 'turn.completed', status: 'delivered', attempts: 1, lastStatusCode: 200 })],
      nextCursor: null,
    });
  });

  it("carries scheduleId in a schedule run's turn webhooks, into its conversation and into a new one", async () => {
    const hook = await receiver();
    const user = await newUser();
    const endpoint = await user.register(hook.url(), ['turn.completed']);
    const conversationId = (await user.api.post('/v1/conversations', {})).body.id as string;
    const into = (await user.api.post('/v1/schedules', { content: scripted({ text: 'into it' }), conversationId, every: '1h' })).body;
    const fresh = (await user.api.post('/v1/schedules', { content: scripted({ text: 'a new one' }), every: '1h' })).body;
    for (const schedule of [into, fresh]) {
      const run = (await user.api.post(`/v1/schedules/${schedule.id}/trigger`)).body;
      expect(run).toMatchObject({ status: 'started', turnId: expect.any(String) });
      const [webhook] = await hook.waitFor(1, (received) => received.json?.data?.turnId === run.turnId);
      expect(verify(endpoint.secret, webhook!).data).toMatchObject({ turnId: run.turnId, conversationId: run.conversationId, status: 'completed', scheduleId: schedule.id });
    }
  });

  it('sends each endpoint only the events it asked for', async () => {
    const all = await receiver();
    const failures = await receiver();
    const user = await newUser();
    const everything = await user.register(all.url(), ['*']);
    const onlyFailed = await user.register(failures.url(), ['turn.failed']);

    await user.runTurn({ text: 'fine' });
    const failed = await user.runTurn({ error: { status: 400 } });
    expect(failed.last.type).toBe('turn-error');

    const got = await failures.waitFor(1);
    expect(verify(onlyFailed.secret, got[0]!)).toMatchObject({
      type: 'turn.failed',
      data: { turnId: failed.turnId, status: 'failed', error: expect.objectContaining({ code: expect.any(String) }), lastSeq: failed.last.seq },
    });
    const types = (await all.waitFor(2)).map((webhook) => verify(everything.secret, webhook).type).sort();
    expect(types).toEqual(['turn.completed', 'turn.failed']);
    // Events are recorded for every endpoint in the commit that ends the turn: the filtered
    // endpoint's log holds the failure alone.
    const log = (await user.api.get(`/v1/webhooks/${onlyFailed.id}/deliveries`)).body.data;
    expect(log.map((delivery: any) => delivery.type)).toEqual(['turn.failed']);
  });

  it('retries a 500 with the same webhook-id until the receiver takes it', async () => {
    const hook = await receiver([500, 500, 200]);
    const user = await newUser();
    const endpoint = await user.register(hook.url());
    await user.runTurn({ text: 'again and again' });
    const attempts = await hook.waitFor(3);
    const ids = attempts.map((webhook) => verify(endpoint.secret, webhook).id);
    expect(new Set(ids).size).toBe(1);
    expect(attempts.map((webhook) => webhook.headers['webhook-id'])).toEqual(ids);
    const delivery = await settledDelivery(user.api, endpoint.id);
    expect(delivery).toMatchObject({ attempts: 3, lastStatusCode: 200, status: 'delivered' });
  });

  it('gives up on an attempt the receiver does not answer in time, and retries it', async () => {
    const hook = await receiver(['hang', 200]);
    const user = await newUser();
    const endpoint = await user.register(hook.url());
    // The turn ends while its webhook is still unanswered: deliveries come after the end's commit.
    const turn = await user.runTurn({ text: 'nobody home' });
    expect((await user.api.get(`/v1/turns/${turn.turnId}`)).body.status).toBe('completed');
    const [hung, retried] = await hook.waitFor(2);
    // The sender cut the unanswered attempt and only then tried again. Its timer started when it
    // sent, so on a loaded machine the receiver may read the request a little after that.
    const cut = await hung!.answered;
    expect(cut.complete).toBe(false);
    expect(retried!.at).toBeGreaterThanOrEqual(cut.at);
    expect(retried!.at - hung!.at).toBeGreaterThanOrEqual(ATTEMPT_TIMEOUT_MS / 2);
    expect(retried!.headers['webhook-id']).toBe(hung!.headers['webhook-id']);
    const delivery = await settledDelivery(user.api, endpoint.id);
    expect(delivery).toMatchObject({ attempts: 2, lastStatusCode: 200 });
  });

  it('signs with both secrets for a while after a rotation', async () => {
    const hook = await receiver();
    const user = await newUser();
    const endpoint = await user.register(hook.url());
    const rotated = await user.api.post(`/v1/webhooks/${endpoint.id}/rotate-secret`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.secret).not.toBe(endpoint.secret);
    expect(Date.parse(rotated.body.previousSecretExpiresAt) - Date.now()).toBeGreaterThan(23 * 3600_000);

    await user.runTurn({ text: 'rotated' });
    const [webhook] = await hook.waitFor(1);
    expect(webhook!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
    expect(verify(rotated.body.secret, webhook!).type).toBe('turn.completed');
    expect(verify(endpoint.secret, webhook!).type).toBe('turn.completed');
    expect(() => new Webhook(Buffer.from('some other secret').toString('base64')).verify(webhook!.body, webhook!.headers)).toThrow();
  });

  it('pages the delivery log newest first with nextCursor', async () => {
    const hook = await receiver();
    const user = await newUser();
    const endpoint = await user.register(hook.url(), ['turn.completed']);
    const events = [];
    for (const text of ['first', 'second', 'third']) events.push((await user.runTurn({ text })).turnId);
    const delivered = await hook.waitFor(3);

    const first = (await user.api.get(`/v1/webhooks/${endpoint.id}/deliveries?limit=2`)).body;
    expect(first.data).toHaveLength(2);
    expect(first.nextCursor).toEqual(expect.any(String));
    const second = (await user.api.get(`/v1/webhooks/${endpoint.id}/deliveries?limit=2&cursor=${encodeURIComponent(first.nextCursor)}`)).body;
    expect(second).toEqual({ data: [expect.objectContaining({ type: 'turn.completed' })], nextCursor: null });
    // Every delivery once, the last turn's first.
    const eventOfTurn = new Map(delivered.map((webhook) => [webhook.json.data.turnId, webhook.json.id]));
    expect([...first.data, ...second.data].map((delivery: any) => delivery.eventId)).toEqual([...events].reverse().map((turnId) => eventOfTurn.get(turnId)));
  });

  it('refuses endpoints past the per-user limit, however many registrations come at once', async () => {
    const hook = await receiver();
    const user = await newUser();
    const other = await newUser();
    await other.register(hook.url());
    const answers = await Promise.all(Array.from({ length: 12 }, () => user.api.post('/v1/webhooks', { url: hook.url(), events: ['*'] })));
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(MAX_ENDPOINTS);
    const refused = answers.filter((answer) => answer.status !== 201);
    expect(refused).toHaveLength(12 - MAX_ENDPOINTS);
    for (const answer of refused) {
      expect(answer.status).toBe(400);
      expect(answer.body.error).toMatchObject({
        code: 'invalid_request',
        message: expect.stringMatching(`at most ${MAX_ENDPOINTS} webhook endpoints \\(WEBHOOK_MAX_ENDPOINTS_PER_USER\\)`),
      });
    }
    const listed = (await user.api.get('/v1/webhooks')).body.data;
    expect(listed).toHaveLength(MAX_ENDPOINTS);

    // Another user's endpoints count for that user alone; a deleted one frees its place.
    expect((await user.api.request('DELETE', `/v1/webhooks/${listed[0].id}`)).status).toBe(200);
    await user.register(hook.url());
    expect((await user.api.post('/v1/webhooks', { url: hook.url(), events: ['*'] })).status).toBe(400);
  });

  it('stops delivering to a deleted endpoint', async () => {
    const hook = await receiver([500]);
    const user = await newUser();
    const endpoint = await user.register(hook.url());
    await user.runTurn({ text: 'soon gone' });
    await hook.waitFor(1);
    const deliveryId = (await user.api.get(`/v1/webhooks/${endpoint.id}/deliveries`)).body.data[0].id;
    expect((await user.api.request('DELETE', `/v1/webhooks/${endpoint.id}`)).body).toEqual({ id: endpoint.id, deleted: true });
    // The job's next run finds nothing to send, and ends: no attempt after that.
    await jobs.completed(deliveryId);
    const settled = hook.received.length;
    expect((await user.api.get(`/v1/webhooks/${endpoint.id}/deliveries`)).status).toBe(404);
    expect((await user.api.get('/v1/webhooks')).body.data).toEqual([]);
    expect((await user.api.request('DELETE', `/v1/webhooks/${endpoint.id}`)).status).toBe(404);
    expect(hook.received.length).toBe(settled);
  });

  it('redelivers a delivered event under the same webhook-id', async () => {
    const hook = await receiver();
    const user = await newUser();
    const endpoint = await user.register(hook.url());
    await user.runTurn({ text: 'once more' });
    const [first] = await hook.waitFor(1);
    const delivery = await settledDelivery(user.api, endpoint.id);
    const redelivered = await user.api.post(`/v1/webhooks/${endpoint.id}/deliveries/${delivery.id}/redeliver`);
    expect(redelivered.status).toBe(202);
    expect(redelivered.body).toMatchObject({ id: delivery.id, status: 'pending', attempts: 0 });
    const [, second] = await hook.waitFor(2);
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(verify(endpoint.secret, second!).id).toBe(first!.headers['webhook-id']);
    expect(await settledDelivery(user.api, endpoint.id, 2)).toMatchObject({ status: 'delivered', attempts: 1 });
    expect((await user.api.post(`/v1/webhooks/${endpoint.id}/deliveries/whd_unknown/redeliver`)).status).toBe(404);
  });

  it('runs a redelivery posted during an attempt from its first attempt, whatever that attempt then records', async () => {
    const hook = await receiver(['hang', 200]);
    const user = await newUser();
    const endpoint = await user.register(hook.url());
    await user.runTurn({ text: 'in flight' });
    // The first attempt is held by the receiver until it times out: a redeliver lands meanwhile.
    const [held] = await hook.waitFor(1);
    let heldOpen = true;
    void held!.answered.then(() => (heldOpen = false));
    const [delivery] = (await user.api.get(`/v1/webhooks/${endpoint.id}/deliveries`)).body.data;
    expect((await user.api.post(`/v1/webhooks/${endpoint.id}/deliveries/${delivery.id}/redeliver`)).status).toBe(202);

    // The redelivery is sent at once, not after the held attempt's retry delay, and is taken; the
    // held attempt's timeout is not counted against it (the attempt's job ends too: two runs).
    const [, redelivered] = await hook.waitFor(2);
    expect(heldOpen).toBe(true);
    expect(redelivered!.headers['webhook-id']).toBe(held!.headers['webhook-id']);
    await jobs.completed(delivery.id, 2);
    expect((await user.api.get(`/v1/webhooks/${endpoint.id}/deliveries`)).body.data[0]).toMatchObject({ status: 'delivered', attempts: 1, lastStatusCode: 200 });
    expect(hook.received).toHaveLength(2);
  });

  it('retries a redelivered event older than the retry window from its first attempt again', async () => {
    const hook = await receiver([200, 500, 200]);
    const user = await newUser();
    const endpoint = await user.register(hook.url());
    await user.runTurn({ text: 'long ago' });
    const delivery = await settledDelivery(user.api, endpoint.id);
    // The event as if it had been recorded two days ago, beyond WEBHOOK_RETRY_FOR_MS (24 h): an outage the receiver is back from.
    await stack.resources.db.query("UPDATE webhook_deliveries SET created_at = created_at - interval '2 days' WHERE id = $1", [delivery.id]);

    expect((await user.api.post(`/v1/webhooks/${endpoint.id}/deliveries/${delivery.id}/redeliver`)).status).toBe(202);
    // The redelivery's first attempt gets a 500; its retry comes, as for a new event, and is taken.
    expect(await settledDelivery(user.api, endpoint.id, 2)).toMatchObject({ status: 'delivered', attempts: 2, lastStatusCode: 200 });
    const [, refused, taken] = await hook.waitFor(3);
    expect(new Set([refused, taken].map((webhook) => verify(endpoint.secret, webhook!).id))).toEqual(new Set([delivery.eventId]));
    // Its lag runs from the redeliver: no delivery of this stack took a day (the event's own age is two).
    const page = await (await fetch(`${stack.url}/metrics`)).text();
    const series = (name: string) => Number(new RegExp(`^switchyard_webhook_delivery_lag_seconds_${name} (\\d+)$`, 'm').exec(page)?.[1]);
    expect(series('count')).toBeGreaterThan(0);
    expect(series('bucket{le="86400"}')).toBe(series('count'));
  });

  it('tells of a turn waiting for its client tool (turn.requires_action)', async () => {
    const hook = await receiver();
    const user = await newUser();
    const endpoint = await user.register(hook.url(), ['turn.requires_action']);
    const conversationId = (await user.api.post('/v1/conversations', {})).body.id;
    const posted = await user.api.post(`/v1/conversations/${conversationId}/turns`, {
      content: scripted({ steps: [{ toolCalls: [{ name: 'confirm', arguments: {} }] }, { text: 'confirmed' }] }),
    });
    const [webhook] = await hook.waitFor(1);
    expect(verify(endpoint.secret, webhook!)).toMatchObject({
      type: 'turn.requires_action',
      data: { turnId: posted.body.turnId, conversationId, status: 'waiting_tools', lastSeq: expect.any(Number) },
    });
    await user.api.post(`/v1/turns/${posted.body.turnId}/cancel`);
  });

  it('tells of a turn waiting for an approval (turn.requires_action, status waiting_approval)', async () => {
    const hook = await receiver();
    const user = await newUser();
    const endpoint = await user.register(hook.url(), ['turn.requires_action']);
    const conversationId = (await user.api.post('/v1/conversations', {})).body.id;
    const posted = await user.api.post(`/v1/conversations/${conversationId}/turns`, {
      content: scripted({ steps: [{ toolCalls: [{ name: 'random_number', arguments: { min: 1, max: 6 } }] }, { text: 'drawn' }] }),
    });
    const [webhook] = await hook.waitFor(1);
    expect(verify(endpoint.secret, webhook!)).toMatchObject({ type: 'turn.requires_action', data: { turnId: posted.body.turnId, status: 'waiting_approval' } });
    expect((await user.api.get(`/v1/turns/${posted.body.turnId}`)).body.status).toBe('waiting_approval');
    await user.api.post(`/v1/turns/${posted.body.turnId}/cancel`);
  });

  it('tells of a batch that completed, and of its items with their batchId and customId', async () => {
    const hook = await receiver();
    const user = await newUser();
    const endpoint = await user.register(hook.url(), ['batch.completed', 'turn.completed']);
    const batch = await user.api.post('/v1/batches', {
      items: [
        { customId: 'first', messages: [scripted({ text: 'one' })] },
        { customId: 'second', messages: [scripted({ text: 'two' })] },
      ],
    });
    expect(batch.status).toBe(202);
    const webhooks = await hook.waitFor(3);
    const payloads = webhooks.map((webhook) => verify(endpoint.secret, webhook));
    const end = payloads.find((payload) => payload.type === 'batch.completed');
    expect(end.data).toMatchObject({ batchId: batch.body.id, status: 'completed', counts: { total: 2, succeeded: 2, failed: 0 }, usage: { totalTokens: expect.any(Number) } });
    const items = payloads.filter((payload) => payload.type === 'turn.completed').map((payload) => payload.data);
    expect(items.map((item) => item.customId).sort()).toEqual(['first', 'second']);
    expect(items.every((item) => item.batchId === batch.body.id)).toBe(true);
  });

  it('tells of a cancelled turn with the whole body the contract gives', async () => {
    const hook = await receiver();
    const user = await newUser();
    const endpoint = await user.register(hook.url(), ['turn.requires_action', 'turn.cancelled']);
    const conversationId = (await user.api.post('/v1/conversations', {})).body.id;
    const { turnId } = (
      await user.api.post(`/v1/conversations/${conversationId}/turns`, { content: scripted({ steps: [{ toolCalls: [{ name: 'confirm', arguments: {} }] }, { text: 'never' }] }) })
    ).body;
    // Cancelled once its first step has run (and used tokens), while it waits for its client tool.
    const [waiting] = await hook.waitFor(1);
    expect((await user.api.post(`/v1/turns/${turnId}/cancel`)).body.status).toBe('cancelled');

    const [, webhook] = await hook.waitFor(2);
    const turn = (await user.api.get(`/v1/turns/${turnId}`)).body;
    expect(verify(endpoint.secret, webhook!)).toEqual({
      id: webhook!.headers['webhook-id'],
      type: 'turn.cancelled',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      // The ledger's sum, as the turn's view shows it.
      data: {
        turnId,
        conversationId,
        status: 'cancelled',
        finishReason: 'cancelled',
        usage: turn.usage,
        lastSeq: expect.any(Number),
      },
    });
    expect(turn.usage.totalTokens).toBeGreaterThan(0);
    expect(JSON.parse(webhook!.body).data.lastSeq).toBeGreaterThan(verify(endpoint.secret, waiting!).data.lastSeq);
  });

  it('tells of a cancelled batch with its counts and usage', async () => {
    const hook = await receiver();
    const user = await newUser();
    const endpoint = await user.register(hook.url(), ['turn.requires_action', 'batch.cancelled']);
    // Each item parks on its client tool after a step that used tokens; the batch is cancelled while they wait.
    const waits = scripted({ steps: [{ toolCalls: [{ name: 'confirm', arguments: {} }] }, { text: 'never' }] });
    const batch = (
      await user.api.post('/v1/batches', {
        items: [
          { customId: 'a', messages: [waits] },
          { customId: 'b', messages: [waits] },
        ],
      })
    ).body;
    await hook.waitFor(2);
    expect((await user.api.post(`/v1/batches/${batch.id}/cancel`)).status).toBe(200);

    const [webhook] = await hook.waitFor(1, (received) => received.json?.type === 'batch.cancelled');
    const cancelled = (await user.api.get(`/v1/batches/${batch.id}`)).body;
    expect(cancelled.status).toBe('cancelled');
    expect(verify(endpoint.secret, webhook!)).toEqual({
      id: webhook!.headers['webhook-id'],
      type: 'batch.cancelled',
      createdAt: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
      data: {
        batchId: batch.id,
        status: 'cancelled',
        counts: { total: 2, queued: 0, running: 0, succeeded: 0, failed: 0, cancelled: 2 },
        // The batch's own usage, as GET /v1/batches/:id shows it: tokens and the ledger's cost.
        usage: cancelled.usage,
      },
    });
    expect(cancelled.usage).toEqual({ promptTokens: expect.any(Number), completionTokens: expect.any(Number), totalTokens: expect.any(Number), costUsd: expect.any(Number) });
    expect(cancelled.usage.totalTokens).toBeGreaterThan(0);
  });

  it('disables an endpoint that keeps failing, and says so', async () => {
    const hook = await receiver([503]);
    const user = await newUser();
    const endpoint = await user.register(hook.url());
    await user.runTurn({ text: 'into the void' });
    await hook.waitFor(1);
    // Its attempts go on until the endpoint has failed for WEBHOOK_DISABLE_AFTER_MS; then the
    // delivery ends, and its job with it.
    const delivery = await settledDelivery(user.api, endpoint.id);
    expect(delivery.status).toBe('failed');
    expect(delivery.attempts).toBeGreaterThan(2);
    const listed = (await user.api.get('/v1/webhooks')).body.data[0];
    expect(listed).toMatchObject({ id: endpoint.id, disabledAt: expect.any(String), disabledReason: expect.stringContaining('failed since'), failingSince: expect.any(String) });
    expect(delivery.lastError).toMatch(/endpoint is disabled|HTTP 503/);
    expect(delivery.lastError.length).toBeLessThan(300);
    // No event is recorded for a disabled endpoint.
    await user.runTurn({ text: 'still nobody' });
    expect((await user.api.get(`/v1/webhooks/${endpoint.id}/deliveries`)).body.data).toHaveLength(1);

    // Once the receiver is fixed, the endpoint is taken back into service: the next turn's event reaches it.
    hook.answers = [204];
    const enabled = await user.api.post(`/v1/webhooks/${endpoint.id}/enable`, {});
    expect(enabled.status).toBe(200);
    expect(enabled.body).toMatchObject({ id: endpoint.id, disabledAt: null, disabledReason: null, failingSince: null });
    const received = hook.received.length;
    const { turnId } = await user.runTurn({ text: 'back again' });
    const [webhook] = (await hook.waitFor(received + 1)).slice(received);
    expect(verify(endpoint.secret, webhook!)).toMatchObject({ type: 'turn.completed', data: { turnId } });
    expect((await user.api.post('/v1/webhooks/wh_missing/enable', {})).status).toBe(404);
  });
});

describe('webhook URLs', () => {
  let stack: TestStack;
  let api: ReturnType<typeof apiClient>;

  beforeAll(async () => {
    stack = await startTestStack({ workers: 0 });
    api = apiClient(stack.url, (await stack.createUser('careful')).apiKey);
  });
  afterAll(() => stack.close());

  it.each([
    ['http://127.0.0.1:8080/hook', /127\.0\.0\.1/],
    ['http://localhost/hook', /loopback, private, link-local/],
    ['http://10.0.0.8/hook', /10\.0\.0\.8/],
    ['http://169.254.169.254/latest/meta-data', /169\.254\.169\.254/],
    ['http://[::1]:3000/hook', /::1/],
    ['http://[::ffff:127.0.0.1]/hook', /loopback/],
    ['http://[::7f00:1]/hook', /::7f00:1/],
    ['http://[::127.0.0.1]:8080/hook', /::7f00:1/],
    ['ftp://example.com/hook', /http/],
    ['https://user:pass@example.com/hook', /credentials/],
  ])('refuses %s', async (url, reason) => {
    const refused = await api.post('/v1/webhooks', { url, events: ['*'] });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'invalid_request', message: expect.stringMatching(reason) });
    expect((await api.get('/v1/webhooks')).body.data).toEqual([]);
  });

  it.each(['localhost', 'nothing-here.invalid'])(
    'tells who registers a URL of %s nothing of the network the server sees: one reason whether the name resolves inside or not at all',
    async (host) => {
      const reason = `the host ${host} does not resolve, or resolves to an address that is not public (loopback, private, link-local)`;
      const refused = await api.post('/v1/webhooks', { url: `http://${host}/hook`, events: ['*'] });
      expect(refused.status).toBe(400);
      expect(refused.body.error).toMatchObject({ message: `url refused: ${reason}`, details: [{ field: 'url', message: reason }] });
    },
  );

  // Refused by the body check every /v1 route shares (api/json-body.ts), before the schema.
  it.each([
    ['a NUL', 'description', { url: 'https://example.com/hook', description: 'bad\u0000byte' }, /NUL/],
    ['a lone surrogate', 'description', { url: 'https://example.com/hook', description: 'half \ud800 a pair' }, /lone surrogate/],
    ['a NUL', 'url', { url: 'https://example.com/hook?q=\u0000' }, /NUL/],
    ['a lone surrogate', 'url', { url: 'https://example.com/\udc00' }, /lone surrogate/],
  ])('refuses %s in %s, which the database cannot store: 400 naming the field, not 500', async (_what, field, body, problem) => {
    const refused = await api.post('/v1/webhooks', { events: ['*'], ...body });
    expect(refused.status).toBe(400);
    expect(refused.body.error).toMatchObject({ code: 'invalid_request', details: [{ field, message: expect.stringMatching(problem) }] });
  });

  it('refuses an event type it does not know', async () => {
    expect((await api.post('/v1/webhooks', { url: 'https://example.com/hook', events: ['turn.exploded'] })).status).toBe(400);
  });
});

describe('webhooks on the embedded database (npm start)', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    stack = await startTestStack({ database: 'pglite', env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RELAY_INTERVAL_MS: '100' } });
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await stack.close();
    await receiver.close();
  });

  it('records the event with the turn and delivers it signed', async () => {
    const { apiKey } = await stack.createUser('embedded');
    const api = apiClient(stack.url, apiKey);
    const { secret } = (await api.post('/v1/webhooks', { url: receiver.url('/hook', 'localhost'), events: ['turn.completed'] })).body;
    const conversationId = (await api.post('/v1/conversations', {})).body.id;
    const turnId = (await api.post(`/v1/conversations/${conversationId}/turns`, { content: scripted({ text: 'embedded' }) })).body.turnId;
    const [webhook] = await receiver.waitFor(1);
    expect(verify(secret, webhook!)).toMatchObject({ type: 'turn.completed', data: { turnId, conversationId, status: 'completed' } });
  });
});
