import type { ChildProcess } from 'node:child_process';
import type { Tracer } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { FlowProducer, type Queue } from 'bullmq';
import { modelsFileEnvironment, toolHeaderEnvironment, type Config } from '../config/config';
import { loadModelCatalogue } from '../models/load-model-catalogue';
import type { ModelCatalogue } from '../models/model-catalogue';
import { TargetCooldowns } from '../models/target-cooldowns';
import { createMetrics, type Metrics } from '../metrics/metrics';
import { createToolQueue } from '../queue/tool-queue';
import { createWebhookQueue } from '../queue/webhook-queue';
import { WebhooksRepository } from '../store/webhooks-repository';
import { AgentReferences } from '../agents/agent-references';
import { AgentsRepository } from '../agents/store/agents-repository';
import { SchedulesRepository } from '../schedules/store/schedules-repository';
import { SecretBox } from '../webhooks/secret-box';
import { BATCH_TURN_QUEUE, batchPriority, createTurnQueue, enqueueResume, enqueueTurn, fairPriority } from '../queue/turn-queue';
import { ConversationsRepository } from '../store/conversations-repository';
import type { Db } from '../store/db';
import { DeltaPacing } from '../event-log/delta-pacing';
import { EventLog } from '../event-log/event-log';
import { MessagesRepository } from '../store/messages-repository';
import { migrate } from '../store/migrate';
import { openDb } from '../store/open-db';
import { ToolCallsRepository } from '../store/tool-calls-repository';
import { ToolApprovalsRepository } from '../store/tool-approvals-repository';
import { ToolInvocationsRepository } from '../store/tool-invocations-repository';
import { BatchesRepository } from '../store/batches-repository';
import { TurnsRepository } from '../store/turns-repository';
import { ProviderCallsRepository } from '../store/provider-calls-repository';
import { CompactionsRepository } from '../store/compactions-repository';
import { mcpToolDescriptorReader, publishMcpToolDescriptors } from '../tools/mcp/mcp-tool-descriptors';
import { loadToolRegistry } from '../tools/tool-registry';
import type { ToolRegistry } from '../tools/tool';
import { UsersRepository } from '../store/users-repository';
import {
  assertNoEviction,
  assertRedisAnswers,
  configuredRedisTarget,
  connectRedis,
  describeRedisTarget,
  ensureRedis,
  whenReady,
  type RedisClient,
  type RedisTarget,
} from '../redis/redis-connection';
import { assertRedisPrefixOurs, reclaimRedisPrefix } from './redis-prefix-ownership';
import { readDeploymentId } from '../store/deployment-id';
import { queuePrefix } from '../queue/queue-prefix';
import type { TurnEndingDeps } from '../turns/turn-ending';
import { TurnHandOff } from '../turns/turn-hand-off';
import { startTracing } from '../tracing/start-tracing';

/**
 * Everything a Switchyard process shares, made once and passed down. Nothing below this
 * reaches for a global: tests build several of these side by side with their own prefixes.
 */
export interface Resources {
  config: Config;
  logger: Logger;
  metrics: Metrics;
  /** OpenTelemetry spans; a no-op tracer unless OTEL_EXPORTER_OTLP_ENDPOINT is set. */
  tracer: Tracer;
  db: Db;
  /** This database's deployment id, which owns REDIS_PREFIX on the Redis. */
  deploymentId: string;
  /** The Redis or Redis Cluster every connection of the process goes to. */
  redisTarget: RedisTarget;
  /** Commands; fails fast when Redis is down (the API answers 503). */
  redis: RedisClient;
  /** BullMQ's key prefix (a hash tag on a cluster): every Queue, Worker, FlowProducer and QueueEvents uses it. */
  queuePrefix: string;
  users: UsersRepository;
  conversations: ConversationsRepository;
  messages: MessagesRepository;
  turns: TurnsRepository;
  toolCalls: ToolCallsRepository;
  /** Every request a turn sent a provider. */
  providerCalls: ProviderCallsRepository;
  /** Long conversations' summaries. */
  compactions: CompactionsRepository;
  toolApprovals: ToolApprovalsRepository;
  invocations: ToolInvocationsRepository;
  batches: BatchesRepository;
  /** Agents and their versions. */
  agents: AgentsRepository;
  /** Checks a new reference to an agent (404 for one missing, someone else's or archived). */
  agentReferences: AgentReferences;
  /** Schedules and their runs. */
  schedules: SchedulesRepository;
  tools: ToolRegistry;
  /** The providers and models (MODELS_FILE, or LLM_*), checked at start. */
  models: ModelCatalogue;
  /** Which of the models' targets cool down, shared by every process through Redis. */
  targetCooldowns: TargetCooldowns;
  eventLog: EventLog;
  turnQueue: Queue;
  /** Batch items' turn starts (their continuations go to `turnQueue`). */
  batchTurnQueue: Queue;
  toolQueue: Queue;
  /** Webhook deliveries, one job each for all its attempts. */
  webhookQueue: Queue;
  flows: FlowProducer;
  webhooks: WebhooksRepository;
  /** Encrypts webhook endpoint secrets at rest (WEBHOOK_SECRET_KEY). */
  secretBox: SecretBox;
  /** Enqueues a turn's start, prioritised fairly among its user's other turns. */
  enqueueTurn: TurnEndingDeps['enqueueTurn'];
  enqueueResume(turnId: string, step: number, traceparent?: string | null): Promise<void>;
  /** Where the API offers the turns it admits to this process's own turn slots, when it has them (start-worker.ts attaches them). */
  turnHandOff: TurnHandOff;
  /** Closes what was opened here, in reverse order. */
  close(): Promise<void>;
}

/**
 * `runsTools`: false for a process that runs no tool (an API alone): it starts no MCP server
 * and lists MCP tools as the workers publish them. `serviceName`: the `service.name` of the
 * process's spans (default `switchyard`).
 */
export async function createResources(config: Config, logger: Logger, options: { runsTools: boolean; serviceName?: string } = { runsTools: true }): Promise<Resources> {
  // Checked before anything is opened: a bad file stops the start with its one line.
  const models = loadModelCatalogue(config, modelsFileEnvironment());
  const closers: Closers = [];
  const metrics = createMetrics();
  try {
    // First opened, last closed: the spans of everything closing before it are still exported.
    const tracing = startTracing({ endpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: options.serviceName ?? 'switchyard' });
    closers.push(() => tracing.shutdown());
    const db = await openMigratedDb(config, logger, metrics, closers);
    const { redisTarget, redis, prefix, deploymentId } = await connectOwnedRedis(config, logger, db, closers);
    const { turnQueue, batchTurnQueue, toolQueue, webhookQueue, flows } = openQueues(redis, prefix, closers);
    const tools = await loadTools(config, logger, metrics, redis, options.runsTools, closers);
    const conversations = new ConversationsRepository(db);
    const turns = new TurnsRepository(db);
    const agents = new AgentsRepository(db);
    const eventLog = openEventLog(config, redisTarget, redis, conversations, closers);

    metrics.watchQueues([turnQueue, batchTurnQueue, toolQueue, webhookQueue]);
    return {
      config,
      logger,
      metrics,
      tracer: tracing.tracer,
      db,
      deploymentId,
      redisTarget,
      redis,
      queuePrefix: prefix,
      users: new UsersRepository(db),
      conversations,
      messages: new MessagesRepository(db),
      turns,
      toolCalls: new ToolCallsRepository(db),
      providerCalls: new ProviderCallsRepository(db),
      compactions: new CompactionsRepository(db),
      toolApprovals: new ToolApprovalsRepository(db),
      invocations: new ToolInvocationsRepository(db),
      batches: new BatchesRepository(db),
      agents,
      agentReferences: new AgentReferences(agents),
      schedules: new SchedulesRepository(db),
      tools,
      models,
      targetCooldowns: new TargetCooldowns(redis, config.REDIS_PREFIX, { baseMs: config.PROVIDER_COOLDOWN_BASE_MS, maxMs: config.PROVIDER_COOLDOWN_MAX_MS }),
      eventLog,
      turnQueue,
      batchTurnQueue,
      toolQueue,
      webhookQueue,
      flows,
      webhooks: new WebhooksRepository(db),
      // Without a configured key the deployment's id stands in: it is in the same database, so
      // it hides secrets from a glance at a table, not from a copy of the database (README).
      secretBox: new SecretBox(config.WEBHOOK_SECRET_KEY ?? `switchyard-webhooks:${deploymentId}`),
      enqueueTurn: async (turn) => {
        const delayMs = turn.retryAt ? Date.parse(turn.retryAt) - Date.now() : 0;
        const active = turn.activeTurnsOfUser ?? (await turns.countActiveForUser(turn.userId));
        if (turn.batchPriority == null) await enqueueTurn(turnQueue, turn, fairPriority(active), delayMs);
        else await enqueueTurn(batchTurnQueue, turn, batchPriority(turn.batchPriority, active), delayMs);
      },
      enqueueResume: (turnId, step, traceparent) => enqueueResume(turnQueue, turnId, step, traceparent),
      turnHandOff: new TurnHandOff(),
      close: () => closeAll(closers),
    };
  } catch (error) {
    await closeAll(closers);
    throw error;
  }
}

/** What `createResources` opened so far, each closed (in reverse order) by `close` or when a later step fails. */
type Closers = (() => Promise<unknown>)[];

async function openMigratedDb(config: Config, logger: Logger, metrics: Metrics, closers: Closers): Promise<Db> {
  const db = await openDb({
    databaseUrl: config.DATABASE_URL,
    listenUrl: config.DATABASE_LISTEN_URL,
    schema: config.DATABASE_SCHEMA,
    dataDir: config.DATA_DIR,
    poolSize: config.DATABASE_POOL_SIZE,
    queryTimeoutMs: config.DATABASE_QUERY_TIMEOUT_MS,
    preparedStatements: config.DATABASE_PREPARED_STATEMENTS,
    onError: (error) => logger.warn({ err: error }, 'database connection error'),
    onQueryTime: (seconds) => metrics.dbQueryDuration.observe(seconds),
  });
  closers.push(() => db.close());
  metrics.readDbConnectionsWith(() => db.connections());
  await migrate(db);
  return db;
}

/**
 * The command connection to the configured Redis (or the embedded one), once it answers, keeps
 * its data and holds this deployment's prefix.
 */
async function connectOwnedRedis(
  config: Config,
  logger: Logger,
  db: Db,
  closers: Closers,
): Promise<{ redisTarget: RedisTarget; redis: RedisClient; prefix: string; deploymentId: string }> {
  // The embedded Redis stands in for one Redis only: a cluster is always configured.
  let redisTarget = configuredRedisTarget(config);
  if (!redisTarget) {
    const embedded = await ensureRedis(config.DATA_DIR);
    if (embedded.child) closers.push(() => stopChild(embedded.child!));
    redisTarget = { kind: 'single', url: embedded.url };
  }
  await assertRedisAnswers(redisTarget);
  const redis = connectRedis(redisTarget, 'command', config.REDIS_COMMAND_TIMEOUT_MS);
  reportConnection(redis, logger);
  closers.push(() => redis.quit().catch(() => redis.disconnect()));
  await whenReady(redis);
  await assertNoEviction(redis);

  // The prefix is this database's on this Redis, or the process stops here, before any of
  // its queues could take another deployment's jobs.
  const prefix = queuePrefix(config);
  const deploymentId = await readDeploymentId(db);
  const ownership = { redis, redisPrefix: config.REDIS_PREFIX, queuePrefix: prefix, deploymentId, where: describeRedisTarget(redisTarget) };
  await assertRedisPrefixOurs(ownership);
  // Every later 'ready' is a reconnection, perhaps to a Redis that came back empty.
  redis.on('ready', () => void reclaimRedisPrefix(ownership, logger));
  return { redisTarget, redis, prefix, deploymentId };
}

/**
 * Producers share the fail-fast connection: while Redis is down an enqueue fails at once
 * (the API answers 503; the turn is in PostgreSQL and the reconciler enqueues it later)
 * instead of waiting in an offline queue. Workers' blocking connections wait outages out.
 */
function openQueues(redis: RedisClient, prefix: string, closers: Closers): Pick<Resources, 'turnQueue' | 'batchTurnQueue' | 'toolQueue' | 'webhookQueue' | 'flows'> {
  const turnQueue = createTurnQueue(redis, prefix);
  closers.push(() => turnQueue.close());
  const batchTurnQueue = createTurnQueue(redis, prefix, BATCH_TURN_QUEUE);
  closers.push(() => batchTurnQueue.close());
  const toolQueue = createToolQueue(redis, prefix);
  closers.push(() => toolQueue.close());
  const webhookQueue = createWebhookQueue(redis, prefix);
  closers.push(() => webhookQueue.close());
  const flows = new FlowProducer({ connection: redis, prefix });
  closers.push(() => flows.close());
  // They relay every error of the shared connection, already logged above; without a
  // listener BullMQ prints each reconnection attempt to stderr.
  const ignore = () => undefined;
  turnQueue.on('error', ignore);
  batchTurnQueue.on('error', ignore);
  toolQueue.on('error', ignore);
  webhookQueue.on('error', ignore);
  flows.on('error', ignore);
  return { turnQueue, batchTurnQueue, toolQueue, webhookQueue, flows };
}

/**
 * Every process loads the tool files itself (the same TOOLS_DIR everywhere); MCP servers run
 * only where tools run, which publish their tools for the API processes.
 */
async function loadTools(config: Config, logger: Logger, metrics: Metrics, redis: RedisClient, runsTools: boolean, closers: Closers): Promise<ToolRegistry> {
  const tools = await loadToolRegistry({
    toolsDir: config.TOOLS_DIR,
    env: toolHeaderEnvironment(),
    logger,
    approvalRequired: config.APPROVAL_REQUIRED_TOOLS,
    mcp: runsTools ? 'start' : { published: mcpToolDescriptorReader(redis, config.REDIS_PREFIX, logger), refreshMs: 10_000 },
  });
  closers.push(() => tools.close());
  if (runsTools) {
    await publishMcpToolDescriptors(redis, config.REDIS_PREFIX, tools.list());
    metrics.registerTools(tools.list().map((tool) => tool.name));
  }
  return tools;
}

/**
 * The event log on a connection of its own: appends wait out a Redis blip rather than failing
 * the step; they are pipelined, so the connection's offline queue keeps their order.
 */
function openEventLog(config: Config, redisTarget: RedisTarget, failFastRedis: RedisClient, conversations: ConversationsRepository, closers: Closers): EventLog {
  const eventConnection = connectRedis(redisTarget, 'blocking');
  eventConnection.on('error', () => undefined);
  closers.push(() => eventConnection.quit().catch(() => eventConnection.disconnect()));
  return new EventLog({
    redis: eventConnection,
    failFastRedis,
    prefix: config.REDIS_PREFIX,
    maxLength: config.EVENT_LOG_MAX_LENGTH,
    ttlSeconds: config.EVENT_LOG_TTL_SECONDS,
    seqFloor: async (conversationId) => (await conversations.getById(conversationId))?.lastSeq ?? 0,
    sharded: redisTarget.kind === 'cluster',
    deltaPacing: new DeltaPacing({ maxIntervalMs: config.DELTA_PACING_MAX_MS }),
  });
}

/** Logs the loss of the connection and, once, its return (operators and tests wait for it). */
function reportConnection(redis: RedisClient, logger: Logger): void {
  let lost = false;
  redis.on('error', (error) => logger.warn({ err: error }, 'redis connection error'));
  redis.on('close', () => {
    lost = true;
  });
  redis.on('ready', () => {
    if (lost) logger.info('redis connection restored');
    lost = false;
  });
}

async function closeAll(closers: Closers): Promise<void> {
  for (const close of closers.reverse()) await close().catch(() => undefined);
}

function stopChild(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
