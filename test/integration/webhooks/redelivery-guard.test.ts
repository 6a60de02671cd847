import type { Db } from '../../../src/store/db';
import { UsersRepository } from '../../../src/store/users-repository';
import { WebhooksRepository } from '../../../src/store/webhooks-repository';
import { createTestDatabase } from '../../support/database';

/**
 * What an attempt records of a delivery redelivered while it ran (store/webhooks-repository.ts):
 * nothing, whichever way it ended; the redeliver's run records its own.
 */
describe('a redelivered delivery and the attempt that read it before', () => {
  let db: Db;
  let drop: () => Promise<void>;
  let webhooks: WebhooksRepository;

  beforeAll(async () => {
    ({ db, drop } = await createTestDatabase('postgres'));
    webhooks = new WebhooksRepository(db);
  });
  afterAll(() => drop());

  /** A pending delivery as its first attempt reads it. */
  async function readDelivery() {
    const user = await new UsersRepository(db).createUserWithKey('redelivery-guard');
    const endpoint = await webhooks.createEndpoint(
      { id: `wh_${user.id}`, userId: user.id, url: 'https://example.com/hook', events: ['*'], description: null, secret: 'sealed' },
      1,
    );
    await db.query(`SELECT record_webhook_event($1, 'turn.completed', '{"turnId": "turn_1"}'::jsonb)`, [user.id]);
    const [listed] = (await webhooks.listDeliveries(endpoint!.id, { limit: 1 })).data;
    return (await webhooks.pendingWithEndpoints([listed!.id])).get(listed!.id)!.delivery;
  }

  it('records neither a failure nor a success read before the redeliver, and records those of the redelivery', async () => {
    const read = await readDelivery();
    const redelivered = (await webhooks.resetForRedelivery(read.endpointId, read.id))!;

    expect(await webhooks.markAttemptFailed(read, { statusCode: 500, error: 'HTTP 500' }, null, 3600_000)).toEqual({ recorded: false, disabled: false });
    await webhooks.markDelivered([{ delivery: read, statusCode: 200 }]);
    expect(await webhooks.getDelivery(read.endpointId, read.id)).toMatchObject({ status: 'pending', attempts: 0, lastStatusCode: null, lastError: null });

    const reread = (await webhooks.pendingWithEndpoints([read.id])).get(read.id)!.delivery;
    expect(reread.redeliveredAt).toEqual(redelivered.redeliveredAt);
    expect(await webhooks.markAttemptFailed(reread, { statusCode: 500, error: 'HTTP 500' }, new Date(Date.now() + 60_000), 3600_000)).toMatchObject({ recorded: true });
    await webhooks.markDelivered([{ delivery: { ...reread, attempts: 1 }, statusCode: 200 }]);
    expect(await webhooks.getDelivery(read.endpointId, read.id)).toMatchObject({ status: 'delivered', attempts: 2, lastStatusCode: 200 });
  });

  it('tells two redeliveries apart however close together they come', async () => {
    const read = await readDelivery();
    const [first, second] = [(await webhooks.resetForRedelivery(read.endpointId, read.id))!, (await webhooks.resetForRedelivery(read.endpointId, read.id))!];
    expect(second.redeliveredAt!.getTime()).toBeGreaterThan(first.redeliveredAt!.getTime());
    expect(await webhooks.markAttemptFailed(first, { statusCode: null, error: 'timeout' }, null, 3600_000)).toMatchObject({ recorded: false });
  });
});
