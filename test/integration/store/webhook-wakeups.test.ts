import { Client, type Notification } from 'pg';
import type { Db } from '../../../src/store/db';
import { UsersRepository } from '../../../src/store/users-repository';
import { webhookWakeupChannel } from '../../../src/store/webhook-wakeup-channel';
import { WebhooksRepository } from '../../../src/store/webhooks-repository';
import { createTestDatabase } from '../../support/database';
import { TEST_POSTGRES_URL } from '../../support/services';

/** A user with an endpoint for every event, and one with none. */
async function users(db: Db) {
  const usersRepository = new UsersRepository(db);
  const withEndpoint = await usersRepository.createUserWithKey('hooked');
  const without = await usersRepository.createUserWithKey('unhooked');
  await new WebhooksRepository(db).createEndpoint(
    { id: `wh_${withEndpoint.id}`, userId: withEndpoint.id, url: 'https://example.com/hook', events: ['*'], description: null, secret: 'sealed' },
    1,
  );
  return { withEndpoint: withEndpoint.id, without: without.id };
}

const record = (db: Db, userId: string) => db.query(`SELECT record_webhook_event($1, 'turn.completed', '{}'::jsonb)`, [userId]);

describe('wakeups of the webhook relays (PostgreSQL)', () => {
  it('notify the schema that recorded a delivery, only it, only when one was recorded and none waited before it', async () => {
    const ours = await createTestDatabase('postgres-schema');
    const theirs = await createTestDatabase('postgres-schema');
    const listener = new Client({ connectionString: TEST_POSTGRES_URL });
    try {
      const [ourUsers, theirUsers] = await Promise.all([users(ours.db), users(theirs.db)]);
      const channel = webhookWakeupChannel(ours.schema);
      await listener.connect();
      await listener.query(`LISTEN "${channel}"`);
      const payloads: string[] = [];
      const ended = new Promise<void>((resolve) =>
        listener.on('notification', (notification: Notification) => {
          payloads.push(notification.payload ?? '');
          if (notification.payload === 'end') resolve();
        }),
      );

      await record(ours.db, ourUsers.withEndpoint);
      await record(theirs.db, theirUsers.withEndpoint);
      await record(ours.db, ourUsers.without);
      // The relay was woken by the first, still waiting: the next commits need not notify.
      await record(ours.db, ourUsers.withEndpoint);
      await ours.db.query(`SELECT pg_notify($1, 'relayed')`, [channel]);
      // Once a relay has taken what waited, the next delivery wakes it again.
      await ours.db.query('UPDATE webhook_deliveries SET enqueued_at = clock_timestamp() WHERE enqueued_at IS NULL');
      await record(ours.db, ourUsers.withEndpoint);
      // Notifications reach a listener in commit order: this one comes after any of those.
      await ours.db.query(`SELECT pg_notify($1, 'end')`, [channel]);
      await ended;
      expect(payloads).toEqual(['', 'relayed', '', 'end']);
    } finally {
      await listener.end();
      await ours.drop();
      await theirs.drop();
    }
  });
});
