import pino from 'pino';
import { createMetrics } from '../../../src/metrics/metrics';
import type { Db } from '../../../src/store/db';
import { UsersRepository } from '../../../src/store/users-repository';
import { WebhooksRepository } from '../../../src/store/webhooks-repository';
import { DeliveryBatches } from '../../../src/webhooks/delivery-batches';
import { SecretBox } from '../../../src/webhooks/secret-box';
import { WebhookConnections } from '../../../src/webhooks/webhook-connections';
import { attemptDelivery } from '../../../src/webhooks/webhook-delivery';
import { PerKeyCap } from '../../../src/limits/per-key-cap';
import { generateWebhookSecret } from '../../../src/webhooks/webhook-signature';
import { createTestDatabase } from '../../support/database';
import { STREAMED_BODY_TEXT, WebhookReceiver, type ReceiverAnswer } from '../../support/webhook-receiver';

const ATTEMPT_TIMEOUT_MS = 5_000;
/** What a delivery log keeps of an answer's body (docs/API.md: "its first 200 characters"). */
const KEPT_CHARS = 200;
const DAY = 24 * 3600_000;

/**
 * One delivery attempt (webhooks/webhook-delivery.ts) against real PostgreSQL and a real
 * receiver, with the DNS answer at attempt time chosen by the test: what the receiver's answer
 * or the address check leaves in the delivery log and the metrics.
 */
describe('a webhook delivery attempt', () => {
  let db: Db;
  let drop: () => Promise<void>;
  let webhooks: WebhooksRepository;
  const secretBox = new SecretBox('webhook-attempt-test-key-of-32-characters');
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    ({ db, drop } = await createTestDatabase('postgres'));
    webhooks = new WebhooksRepository(db);
  });
  afterAll(async () => {
    for (const receiver of receivers) await receiver.close();
    await drop();
  });

  async function receiver(answers: ReceiverAnswer[]): Promise<WebhookReceiver> {
    const started = await WebhookReceiver.start(answers);
    receivers.push(started);
    return started;
  }

  /** An endpoint at `url` (sealed with `sealedWith`'s key; as if its host resolved publicly when registered) with one event recorded for it; returns the delivery's id. */
  async function pendingDelivery(url: string, sealedWith = secretBox): Promise<string> {
    const user = await new UsersRepository(db).createUserWithKey('webhook-attempt');
    const endpoint = await webhooks.createEndpoint(
      { id: `wh_${user.id}`, userId: user.id, url, events: ['*'], description: null, secret: sealedWith.seal(generateWebhookSecret()) },
      1,
    );
    await db.query(`SELECT record_webhook_event($1, 'turn.completed', '{"turnId": "turn_1"}'::jsonb)`, [user.id]);
    const [delivery] = (await webhooks.listDeliveries(endpoint!.id, { limit: 1 })).data;
    return delivery!.id;
  }

  /**
   * Runs one attempt of the delivery (to receivers on 127.0.0.1 unless `insideRefused`); returns
   * what it decided, how long it took, the delivery after it and the attempts counted.
   */
  async function attempt(deliveryId: string, options: { insideRefused?: boolean; resolve?: (hostname: string) => Promise<{ address: string; family: number }[]> } = {}) {
    const metrics = createMetrics();
    const connections = new WebhookConnections();
    try {
      const next = await attemptDelivery(
        {
          webhooks,
          batches: new DeliveryBatches(webhooks),
          secretBox,
          connections,
          slots: new PerKeyCap(1),
          metrics,
          logger: pino({ level: 'silent' }),
          settings: { timeoutMs: ATTEMPT_TIMEOUT_MS, schedule: { delaysMs: [60_000], retryForMs: DAY }, disableAfterMs: 3 * DAY, allowPrivateNetworks: !options.insideRefused },
          resolve: options.resolve,
        },
        { deliveryId, redeliveredAt: null },
      );
      const [delivery] = (await db.query<{ endpoint_id: string }>('SELECT endpoint_id FROM webhook_deliveries WHERE id = $1', [deliveryId])).rows;
      const after = await webhooks.getDelivery(delivery!.endpoint_id, deliveryId);
      const counted = Object.fromEntries((await metrics.webhookAttempts.get()).values.filter((each) => each.value > 0).map((each) => [each.labels.outcome, each.value]));
      return { next, delivery: after!, counted };
    } finally {
      await connections.close();
    }
  }

  it('refuses a host that resolves to an inside address when the attempt is made, and never calls it', async () => {
    // Only the address the check is given can be reached: `.test` names never resolve otherwise.
    const hook = await receiver([200]);
    const deliveryId = await pendingDelivery(hook.url('/hook', 'hooks.example.test'));
    const { next, delivery, counted } = await attempt(deliveryId, { insideRefused: true, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });

    expect(next).toMatchObject({ kind: 'retry' });
    expect(delivery).toMatchObject({
      status: 'pending',
      attempts: 1,
      lastStatusCode: null,
      lastError: 'the host hooks.example.test does not resolve, or resolves to an address that is not public (loopback, private, link-local)',
    });
    expect(counted).toEqual({ refused: 1 });
    expect(hook.received).toHaveLength(0);
  });

  it('reads the start of a large error answer and drops the rest with its connection', async () => {
    const hook = await receiver([{ status: 500, bodyBytes: 64 * 1024 * 1024 }]);
    const { delivery, counted } = await attempt(await pendingDelivery(hook.url()));

    // An answer, not a timeout (an attempt still reading when ATTEMPT_TIMEOUT_MS ends counts as one).
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 500, lastError: `HTTP 500: ${STREAMED_BODY_TEXT.repeat(20).slice(0, KEPT_CHARS)}` });
    expect(counted).toEqual({ http_error: 1 });
    // Not read to its end: the service went before the receiver had written it all.
    expect(await hook.received[0]!.answered).toMatchObject({ complete: false });
  });

  it('ends an attempt whose error answer never ends by its read limit, not its timeout', async () => {
    const hook = await receiver([{ status: 500, bodyBytes: 'endless' }]);
    const { delivery, counted } = await attempt(await pendingDelivery(hook.url()));

    // Ended by the read limit, not by ATTEMPT_TIMEOUT_MS: a timeout would count as `timeout`, with no status.
    expect(delivery).toMatchObject({ attempts: 1, lastStatusCode: 500, lastError: `HTTP 500: ${STREAMED_BODY_TEXT.repeat(20).slice(0, KEPT_CHARS)}` });
    expect(counted).toEqual({ http_error: 1 });
    expect(await hook.received[0]!.answered).toMatchObject({ complete: false });
  });

  it('does not follow a redirect: the attempt fails and the URL it points to is never called', async () => {
    const elsewhere = await receiver([200]);
    const hook = await receiver([{ status: 302, headers: { location: elsewhere.url('/inside') }, bodyBytes: 0 }]);
    const { delivery, counted } = await attempt(await pendingDelivery(hook.url()));

    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: 302, lastError: 'HTTP 302' });
    expect(counted).toEqual({ http_error: 1 });
    expect(hook.received).toHaveLength(1);
    expect(elsewhere.received).toHaveLength(0);
  });

  it('records an attempt whose secret the key no longer opens as failed, without calling the receiver', async () => {
    const hook = await receiver([200]);
    const deliveryId = await pendingDelivery(hook.url(), new SecretBox('a-webhook-secret-key-since-replaced-by-another'));
    const { next, delivery, counted } = await attempt(deliveryId);

    // A failed attempt on the retry schedule, not an error that leaves it uncounted.
    expect(next).toMatchObject({ kind: 'retry' });
    expect(delivery).toMatchObject({ status: 'pending', attempts: 1, lastStatusCode: null, lastError: expect.stringMatching(/signing secret cannot be decrypted/) });
    expect(counted).toEqual({ unattempted: 1 });
    expect(hook.received).toHaveLength(0);
  });
});
