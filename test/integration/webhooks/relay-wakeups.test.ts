import { Client } from 'pg';
import { webhookWakeupChannel } from '../../../src/store/webhook-wakeup-channel';
import { apiClient } from '../../support/http';
import { scripted } from '../../support/scripted';
import { TEST_POSTGRES_URL } from '../../support/services';
import { startTestStack, type TestStack } from '../../support/stack';
import { WebhookReceiver } from '../../support/webhook-receiver';

/** The relay's fallback poll: an event reaching the receiver sooner was woken by its commit. */
const INTERVAL_MS = 60_000;
/** Prompt, on a loaded machine: far below the interval. */
const PROMPTLY_MS = 10_000;

/** Runs a turn; resolves when its turn.completed reached `receiver`, failing if that took an interval. */
async function turnCompletedArrives(api: ReturnType<typeof apiClient>, receiver: WebhookReceiver): Promise<void> {
  const conversationId = (await api.post('/v1/conversations', {})).body.id;
  const turnId = (await api.post(`/v1/conversations/${conversationId}/turns`, { content: scripted({ text: 'soon' }) })).body.turnId;
  await receiver.waitFor(1, (webhook) => webhook.json?.data?.turnId === turnId, PROMPTLY_MS);
}

describe('the webhook relay woken by the commit that records a delivery (PostgreSQL)', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;
  let admin: Client;
  let api: ReturnType<typeof apiClient>;

  /** The backend of the relay's listening connection (its last statement was the LISTEN), once there is one other than `not`. */
  async function listeningBackend(not?: number): Promise<number> {
    const listen = `LISTEN "${webhookWakeupChannel(stack.config.DATABASE_SCHEMA)}"`;
    for (;;) {
      const { rows } = await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE query = $1 AND pid <> $2', [listen, not ?? 0]);
      if (rows[0]) return rows[0].pid;
    }
  }

  beforeAll(async () => {
    stack = await startTestStack({ env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RELAY_INTERVAL_MS: String(INTERVAL_MS) } });
    receiver = await WebhookReceiver.start();
    admin = new Client({ connectionString: TEST_POSTGRES_URL });
    await admin.connect();
    const { apiKey } = await stack.createUser('woken');
    api = apiClient(stack.url, apiKey);
    expect((await api.post('/v1/webhooks', { url: receiver.url(), events: ['turn.completed'] })).status).toBe(201);
    // Listening is set up beside the relay's first pass: an event before it would be caught by
    // the pass that listening starts, not by its notification.
    await listeningBackend();
  });
  afterAll(async () => {
    await admin.end();
    await stack.close();
    await receiver.close();
  });

  it('delivers turn.completed long before the relay would look again', async () => {
    await turnCompletedArrives(api, receiver);
  });

  it('listens again after its connection is killed, and is woken again', async () => {
    const killed = await listeningBackend();
    await admin.query('SELECT pg_terminate_backend($1)', [killed]);
    await listeningBackend(killed);
    await turnCompletedArrives(api, receiver);
  });
});

describe('the webhook relay woken by the commit that records a delivery (embedded database)', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    stack = await startTestStack({ database: 'pglite', env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RELAY_INTERVAL_MS: String(INTERVAL_MS) } });
    receiver = await WebhookReceiver.start();
  });
  afterAll(async () => {
    await stack.close();
    await receiver.close();
  });

  it('delivers turn.completed long before the relay would look again', async () => {
    const { apiKey } = await stack.createUser('embedded');
    const api = apiClient(stack.url, apiKey);
    expect((await api.post('/v1/webhooks', { url: receiver.url(), events: ['turn.completed'] })).status).toBe(201);
    await turnCompletedArrives(api, receiver);
  });
});
