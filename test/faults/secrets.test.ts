import { createHash, randomBytes } from 'node:crypto';
import { announceRevocation } from '../../src/auth/revocation-watch';
import { apiClient } from '../support/http';
import { checkInvariants } from '../support/invariants';
import { spawnService, type ServiceProcess } from '../support/processes';
import { rawHandshake } from '../support/raw-websocket';
import { startTestStack, type TestStack } from '../support/stack';
import { startToolHttpServer, writeToolsDir, type ToolHttpServer } from '../support/tool-servers';
import { scripted } from '../support/tool-turns';
import { TestWsClient } from '../support/ws-client';
import { WebhookReceiver } from '../support/webhook-receiver';
import { Webhook } from 'standardwebhooks';

const planted = (what: string) => `${what}-planted-${randomBytes(16).toString('hex')}`;
const LLM_API_KEY = planted('sk-llm');
const TOOL_SECRET = planted('tool');
const ADMIN_TOKEN = planted('admin');
const WEBHOOK_SECRET_KEY = planted('webhook-key');

/**
 * docs/RELIABILITY.md case 26: secrets in the provider key, a user's API key, a tool header, a webhook
 * endpoint's secret and the key it is encrypted with never
 * reach any process's logs (debug level), Redis (job data included) or PostgreSQL (keys only as
 * a SHA-256); a revoked key stops working at once. The API and the worker are real processes.
 */
describe('secrets', () => {
  let stack: TestStack;
  let tools: ToolHttpServer;
  let api: ServiceProcess;
  let worker: ServiceProcess;
  let user: { id: string; keyId: string; apiKey: string };
  let secondKey: string;
  let adminMadeKey: string;
  let receiver: WebhookReceiver;
  const turnIds: string[] = [];
  const clients: TestWsClient[] = [];

  beforeAll(async () => {
    tools = await startToolHttpServer();
    // The first delivery fails (the failure path logs), its retry is taken.
    receiver = await WebhookReceiver.start([500, 200]);
    tools.route('/vault', () => ({ body: { stored: true } }));
    tools.route('/down', () => ({ status: 503, body: 'vault is down' }));
    tools.route('/hang', () => ({ hang: true }));
    const toolHeaders = { Authorization: 'Bearer ${TOOL_SECRET}', 'X-Vault-Token': '${TOOL_SECRET}' };
    const toolsDir = await writeToolsDir({
      'vault.json': [
        { name: 'vault', description: 'Stores an item', url: `${tools.url}/vault`, headers: toolHeaders, retries: 0, fields: [{ name: 'item', required: true }] },
        { name: 'vault_down', description: 'Always down', url: `${tools.url}/down`, headers: toolHeaders, retries: 1, fields: [{ name: 'item', required: true }] },
        { name: 'vault_slow', description: 'Never answers', url: `${tools.url}/hang`, headers: toolHeaders, retries: 0, fields: [{ name: 'item', required: true }] },
      ],
    });
    stack = await startTestStack({ workers: 0 });
    const env = stack.childEnv({
      TOOLS_DIR: toolsDir,
      TOOL_SECRET,
      LLM_API_KEY,
      ADMIN_TOKEN,
      PROVIDER_RETRY_BASE_MS: '20',
      PROVIDER_RETRY_MAX_MS: '50',
      WEBHOOK_SECRET_KEY,
      WEBHOOK_ALLOW_PRIVATE_NETWORKS: 'true',
      WEBHOOK_RETRY_DELAYS_MS: '100',
    });
    [api, worker] = await Promise.all([spawnService('api', env, { logLevel: 'debug' }), spawnService('worker', env, { logLevel: 'debug' })]);
    user = await stack.resources.users.createUserWithKey('key-holder');
    secondKey = (await stack.resources.users.createApiKey(user.id)).apiKey;
  });
  afterAll(async () => {
    for (const client of clients) client.close();
    await Promise.all([api?.kill(), worker?.kill()]);
    await stack.close();
    await tools.close();
    await receiver.close();
  });

  it('keeps every planted secret out of the logs, Redis and PostgreSQL while the service uses them', async () => {
    const client = apiClient(api.url, user.apiKey);
    const conversationId = (await client.post('/v1/conversations', {})).body.id as string;
    const ws = await TestWsClient.subscribed(api.url, { apiKey: user.apiKey }, conversationId);
    clients.push(ws);
    const post = async (scenario: unknown, conversation = conversationId) => {
      const posted = await client.post(`/v1/conversations/${conversation}/turns`, { content: `please ${scripted(scenario)}` });
      expect(posted.status).toBe(202);
      turnIds.push(posted.body.turnId);
      return posted.body.turnId as string;
    };
    const run = async (scenario: unknown) => ws.waitForTurnEnd(await post(scenario));
    const webhook = await client.post('/v1/webhooks', { url: receiver.url(), events: ['turn.completed'] });
    expect(webhook.status).toBe(201);
    const webhookSecret = webhook.body.secret as string;
    // The paths that log: a tool that works, one that fails and is retried, a provider that
    // refuses for good and one that fails once.
    await run({ steps: [{ toolCalls: [{ name: 'vault', arguments: { item: 'gold' } }] }, { text: 'stored' }] });
    await run({ steps: [{ toolCalls: [{ name: 'vault_down', arguments: { item: 'silver' } }] }, { text: 'it is down' }] });
    await run({ error: { status: 401, message: 'Incorrect API key provided' } });
    const events = await run({ attempts: [{ error: { status: 503 } }, { text: 'fine now' }] });
    expect(events.map((event) => event.type)).toContain('provider-retry');
    // Two turns left mid-way, so that their jobs are in Redis when it is searched: one whose tool
    // hangs (run by its turn job in a local tool slot) and one waiting out a provider's Retry-After.
    const hanging = await post({ steps: [{ toolCalls: [{ name: 'vault_slow', arguments: { item: 'bronze' } }] }, { text: 'never' }] });
    await tools.waitForRequests(tools.requests.length + 1);
    const secondConversation = (await client.post('/v1/conversations', {})).body.id as string;
    ws.send({ type: 'subscribe', conversationId: secondConversation });
    const waiting = await post({ error: { status: 429, retryAfterSeconds: 600 } }, secondConversation);
    await ws.waitFor((frame) => frame.type === 'event' && frame.event.turnId === waiting && frame.event.type === 'provider-retry');

    // Credentials in use, right and wrong, over HTTP and the websocket; a user made by the admin.
    expect((await apiClient(api.url, `${user.apiKey}x`).get('/v1/conversations')).status).toBe(401);
    expect((await client.get('/v1/no-such-route')).status).toBe(404);
    const { ticket } = (await client.post('/v1/ws-tickets')).body;
    clients.push(await TestWsClient.connect(api.url, { ticket }));
    await expect(TestWsClient.connect(api.url, { ticket })).rejects.toThrow('HTTP 401');
    const made = await apiClient(api.url, ADMIN_TOKEN).post('/v1/admin/users', { name: 'made-by-admin' });
    expect(made.status).toBe(201);
    adminMadeKey = made.body.apiKey;
    expect((await apiClient(api.url, adminMadeKey).get('/v1/conversations')).status).toBe(200);

    // The secrets really were in play: the provider and the tool got them.
    expect(stack.scripted.requests.map((request) => request.headers.authorization)).toContain(`Bearer ${LLM_API_KEY}`);
    expect(tools.requests.map((request) => [request.headers.authorization, request.headers['x-vault-token']])).toContainEqual([`Bearer ${TOOL_SECRET}`, TOOL_SECRET]);
    expect(tools.requests.filter((request) => request.path === '/down')).toHaveLength(2);
    expect(tools.requests.filter((request) => request.path === '/hang')).toHaveLength(1);
    // The webhook secret signed real deliveries, one refused and retried.
    const [refused] = await receiver.waitFor(1);
    const [, taken] = await receiver.waitFor(2, (each) => each.headers['webhook-id'] === refused!.headers['webhook-id']);
    expect(() => new Webhook(webhookSecret).verify(taken!.body, taken!.headers)).not.toThrow();
    const secrets = {
      LLM_API_KEY,
      TOOL_SECRET,
      ADMIN_TOKEN,
      WEBHOOK_SECRET_KEY,
      webhookSecret,
      webhookSecretKeyBytes: webhookSecret.slice('whsec_'.length),
      userKey: user.apiKey,
      secondKey,
      adminMadeKey,
    };
    const leaks = (where: string, text: string) =>
      Object.entries(secrets)
        .filter(([, secret]) => text.includes(secret))
        .map(([name]) => `${name} in ${where}`);

    // Logs, at debug level, of both processes, including the failures above.
    const logs = { api: api.stdout() + api.stderr(), worker: worker.stdout() + worker.stderr() };
    const workerEntries = worker
      .stdout()
      .split('\n')
      .filter(Boolean)
      .map((line) => JSON.parse(line));
    expect(workerEntries.some((entry) => entry.level === 20)).toBe(true);
    expect(workerEntries.some((entry) => entry.err || entry.reason)).toBe(true);
    expect([...leaks('api logs', logs.api), ...leaks('worker logs', logs.worker)]).toEqual([]);

    // Redis: every key of the stack's prefix, BullMQ's job hashes (data, options, failures) included.
    const redis = stack.resources.redis;
    const keys: string[] = [];
    let cursor = '0';
    do {
      const [next, batch] = await redis.scan(cursor, 'MATCH', `${stack.config.REDIS_PREFIX}:*`, 'COUNT', 1000);
      cursor = next;
      keys.push(...batch);
    } while (cursor !== '0');
    let dump = '';
    const jobs: Record<string, string>[] = [];
    for (const key of keys) {
      const type = await redis.type(key);
      if (type === 'string') dump += await redis.get(key);
      else if (type === 'hash') {
        const hash = await redis.hgetall(key);
        if ('data' in hash && 'opts' in hash) jobs.push(hash);
        dump += JSON.stringify(hash);
      } else if (type === 'list') dump += JSON.stringify(await redis.lrange(key, 0, -1));
      else if (type === 'set') dump += JSON.stringify(await redis.smembers(key));
      else if (type === 'zset') dump += JSON.stringify(await redis.zrange(key, '0', '-1'));
      else if (type === 'stream') dump += JSON.stringify(await redis.xrange(key, '-', '+'));
    }
    // The jobs of both unfinished turns were there to be searched: each turn's own (the hanging
    // call runs in the worker's local tool slot, held by its turn's job, active while it runs).
    const jobData = jobs.map((job) => JSON.parse(job.data!));
    expect(jobData).toEqual(
      expect.arrayContaining([
        { turnId: waiting, conversationId: expect.any(String) },
        { turnId: hanging, conversationId: expect.any(String) },
      ]),
    );
    expect(dump).toContain('vault is down');
    expect(leaks('Redis', dump)).toEqual([]);

    // PostgreSQL: API keys only as their SHA-256, and no secret in any table.
    const { rows: keyRows } = await stack.resources.db.query<{ key_hash: string }>('SELECT key_hash FROM api_keys WHERE user_id = $1 ORDER BY created_at', [user.id]);
    const sha256 = (key: string) => createHash('sha256').update(key).digest('hex');
    expect(keyRows.map((row) => row.key_hash).sort()).toEqual([sha256(user.apiKey), sha256(secondKey)].sort());
    const { rows: tables } = await stack.resources.db.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.tables WHERE table_schema = $1 AND table_type = 'BASE TABLE'`,
      [stack.config.DATABASE_SCHEMA],
    );
    expect(tables.map((table) => table.table_name)).toEqual(expect.arrayContaining(['api_keys', 'turns', 'messages', 'tool_calls', 'webhook_endpoints']));
    let database = '';
    for (const { table_name: table } of tables) {
      const { rows } = await stack.resources.db.query<{ dump: string | null }>(`SELECT json_agg(t)::text AS dump FROM "${table}" t`);
      database += rows[0]?.dump ?? '';
    }
    expect(database).toContain('vault is down');
    expect(leaks('PostgreSQL', database)).toEqual([]);

    for (const turnId of [hanging, waiting]) expect((await client.post(`/v1/turns/${turnId}/cancel`)).body.status).toBe('cancelled');
    const statuses = await checkInvariants(stack.resources.db, { turnIds, toolExecutions: tools.executions() });
    expect(Object.values(statuses)).toEqual(['completed', 'completed', 'failed', 'completed', 'cancelled', 'cancelled']);
  });

  it('refuses a revoked key at once, over HTTP, at the websocket handshake and in tickets issued with it; the user’s other key still works', async () => {
    const client = apiClient(api.url, user.apiKey);
    expect((await client.get('/v1/conversations')).status).toBe(200);
    const handshake = await rawHandshake(api.url, { headers: { authorization: `Bearer ${user.apiKey}` } });
    expect(handshake.status).toBe(101);
    handshake.socket.destroy();
    const { ticket } = (await client.post('/v1/ws-tickets')).body;
    const open = await TestWsClient.connect(api.url, { apiKey: user.apiKey });

    // Revoked as the CLI does it: in the database, then announced to the API processes.
    expect(await stack.resources.users.revokeApiKey(user.keyId)).toBe(true);
    await announceRevocation(stack.resources.redis, stack.config.REDIS_PREFIX, user.keyId);
    // Its close shows that the API process has the announcement.
    expect(await open.whenClosed()).toEqual({ code: 1008, reason: 'the API key was revoked' });
    // A ticket issued before the revocation is void with its key.
    await expect(TestWsClient.connect(api.url, { ticket })).rejects.toThrow('HTTP 401');
    const refused = await client.get('/v1/conversations');
    expect([refused.status, refused.body.error.code]).toEqual([401, 'unauthorized']);
    expect((await client.post('/v1/ws-tickets')).status).toBe(401);
    const refusedHandshake = await rawHandshake(api.url, { headers: { authorization: `Bearer ${user.apiKey}` } });
    expect([refusedHandshake.status, JSON.parse(refusedHandshake.body).error.code]).toEqual([401, 'unauthorized']);
    refusedHandshake.socket.destroy();

    expect((await apiClient(api.url, secondKey).get('/v1/conversations')).body.data).toHaveLength(2);
    const other = await TestWsClient.connect(api.url, { apiKey: secondKey });
    clients.push(other);
  });
});
