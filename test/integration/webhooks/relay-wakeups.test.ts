import { Client } from 'pg';
import { webhookWakeupChannel } from '../../../src/store/webhook-wakeup-channel';
import { apiClient } from '../../support/http';
import { poll } from '../../support/poll';
import { uniqueSuffix } from '../../support/ids';
import { scripted } from '../../support/scripted';
import { TEST_POSTGRES_URL } from '../../support/services';
import { startTestStack, type TestStack } from '../../support/stack';
import { startPostgresProxy, type TcpProxy } from '../../support/tcp-proxy';
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
  /** The way of DATABASE_LISTEN_URL only: cut, it takes the listening connection down and keeps it down. */
  let listenProxy: TcpProxy;
  /** DATABASE_LISTEN_URL's application_name: the listening connection is told apart by it. */
  const listenerName = `listen_${uniqueSuffix()}`;

  /** The backend of the relay's listening connection (its last statement was the LISTEN), once there is one other than `not`. */
  async function listeningBackend(not?: number): Promise<{ pid: number; applicationName: string }> {
    const listen = `LISTEN "${webhookWakeupChannel(stack.config.DATABASE_SCHEMA)}"`;
    let backend: { pid: number; applicationName: string } | undefined;
    await poll(
      `no backend ${not === undefined ? '' : `other than ${not} `}listened within ${PROMPTLY_MS} ms`,
      async () => {
        const { rows } = await admin.query<{ pid: number; applicationName: string }>(
          'SELECT pid, application_name AS "applicationName" FROM pg_stat_activity WHERE query = $1 AND pid <> $2',
          [listen, not ?? 0],
        );
        backend = rows[0];
        return backend !== undefined;
      },
      PROMPTLY_MS,
    );
    return backend!;
  }

  /** The relay's listening connection as /metrics shows it, once `wanted` holds (failing with the last figures after PROMPTLY_MS). */
  async function listenerMetrics(wanted: (figures: { connected: number; losses: number }) => boolean): Promise<{ connected: number; losses: number }> {
    const { registry } = stack.resources.metrics;
    const sample = async (name: string) => {
      const page = await registry.getSingleMetricAsString(name);
      return Number(new RegExp(`^${name}\\{listener="webhook_relay"\\} (\\S+)$`, 'm').exec(page)?.[1]);
    };
    let figures = { connected: Number.NaN, losses: Number.NaN };
    await poll(
      () => `the listener's figures stayed ${JSON.stringify(figures)}`,
      async () => {
        figures = { connected: await sample('switchyard_db_listener_connected'), losses: await sample('switchyard_db_listener_losses_total') };
        return wanted(figures);
      },
      PROMPTLY_MS,
    );
    return figures;
  }

  beforeAll(async () => {
    listenProxy = await startPostgresProxy(TEST_POSTGRES_URL);
    const listenUrl = new URL(listenProxy.urlFor(TEST_POSTGRES_URL));
    listenUrl.searchParams.set('application_name', listenerName);
    stack = await startTestStack({
      env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RELAY_INTERVAL_MS: String(INTERVAL_MS), DATABASE_LISTEN_URL: listenUrl.toString() },
    });
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
    await listenProxy.close();
  });

  it('delivers turn.completed long before the relay would look again', async () => {
    await turnCompletedArrives(api, receiver);
  });

  it('listens over DATABASE_LISTEN_URL, and queries over DATABASE_URL', async () => {
    expect((await listeningBackend()).applicationName).toBe(listenerName);
    const { rows } = await stack.resources.db.query<{ name: string }>("SELECT current_setting('application_name') AS name");
    expect(rows[0]!.name).not.toBe(listenerName);
  });

  it('listens again after its connection is killed, and is woken again', async () => {
    const { losses } = await listenerMetrics(({ connected }) => connected === 1);
    const killed = await listeningBackend();
    await admin.query('SELECT pg_terminate_backend($1)', [killed.pid]);
    await listeningBackend(killed.pid);
    await listenerMetrics((figures) => figures.connected === 1 && figures.losses === losses + 1);
    await turnCompletedArrives(api, receiver);
  });

  it('shows its listening connection down on /metrics while it cannot listen, and up once it listens again', async () => {
    const { losses } = await listenerMetrics(({ connected }) => connected === 1);
    const dropped = await listeningBackend();
    listenProxy.cut();
    await listenerMetrics((figures) => figures.connected === 0 && figures.losses === losses + 1);
    listenProxy.restore();
    await listeningBackend(dropped.pid);
    await listenerMetrics((figures) => figures.connected === 1 && figures.losses === losses + 1);
    await turnCompletedArrives(api, receiver);
  });
});

describe('the webhook relay woken by the commit that records a delivery (embedded database)', () => {
  let stack: TestStack;
  let receiver: WebhookReceiver;

  // The embedded database is WebAssembly: on a machine busy with other suites its start alone took over 30 s.
  beforeAll(async () => {
    stack = await startTestStack({ database: 'pglite', env: { WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true', WEBHOOK_RELAY_INTERVAL_MS: String(INTERVAL_MS) } });
    receiver = await WebhookReceiver.start();
  }, 90_000);
  afterAll(async () => {
    await stack?.close();
    await receiver?.close();
  });

  it('delivers turn.completed long before the relay would look again', async () => {
    const { apiKey } = await stack.createUser('embedded');
    const api = apiClient(stack.url, apiKey);
    expect((await api.post('/v1/webhooks', { url: receiver.url(), events: ['turn.completed'] })).status).toBe(201);
    await turnCompletedArrives(api, receiver);
  });
});
