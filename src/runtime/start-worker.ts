import http from 'node:http';
import { BudgetsRepository } from '../usage/store/budgets-repository';
import express from 'express';
import { healthRouter } from '../api/health-router';
import type { ModelProvider } from '../providers/model-provider';
import { LoopSlices } from '../providers/loop-slices';
import { connectModelProviders } from '../models/model-providers';
import { coolingTargets } from '../models/model-listing';
import type { Config } from '../config/config';
import type { TurnRunnerDeps } from '../turns/turn-runner';
import { startToolWorker } from '../tool-calls/tool-worker';
import { LocalToolSlots } from '../tool-calls/local-tool-slots';
import { LocalTurnSlots } from '../turns/local-turn-slots';
import { TurnCancellations } from '../queue/turn-cancellations';
import { startReconciler } from '../turns/turn-reconciler';
import { FIRE_CONCURRENCY, ScheduleRunner } from '../schedules/schedule-runner';
import { startScheduleTicker } from '../schedules/schedule-ticker';
import { startTurnWorker } from '../turns/turn-worker';
import { connectRedis } from '../redis/redis-connection';
import type { Resources } from './resources';
import { listen } from './server-helpers';
import { createReadinessCheck } from './readiness';
import { turnServiceWithBatches } from './batch-runner-for';
import { startBatchRepair } from '../batches/batch-repair';
import { startWebhookWorker } from '../webhooks/webhook-worker';
import { startWebhookRelay } from '../webhooks/webhook-relay';
import { WebhookConnections } from '../webhooks/webhook-connections';
import { DeliveryBatches } from '../webhooks/delivery-batches';
import { PerKeyCap } from '../limits/per-key-cap';
import { webhookWakeupChannel } from '../store/webhook-wakeup-channel';
import { meteredChannelListener } from './metered-channel-listener';
import { loadTokenizer } from '../usage/usage-estimate';
import { startConversationRetention } from '../openai/conversation-retention';
import { meteredLedger } from '../usage/metered-ledger';

export interface RunningWorker {
  /** The port of its /healthz and /metrics server, when it has one. */
  port?: number;
  close(): Promise<void>;
}

/**
 * Turn workers for this process. `providerUrl` is the model when LLM_BASE_URL is unset (the
 * scripted model); `withHealthServer` serves /healthz and /metrics on PORT.
 */
export async function startWorker(
  resources: Resources,
  // `now`: the clock its turns read (a test's, to cross a budget's period without waiting for it).
  options: { withHealthServer: boolean; providerUrl?: string; now?: () => Date },
): Promise<RunningWorker> {
  const { config, logger } = resources;
  loadTokenizer();
  const providers = connectModelProviders(resources.models, {
    idleTimeoutMs: config.PROVIDER_IDLE_TIMEOUT_MS,
    slices: new LoopSlices(config.STREAM_READ_SLICE_MS),
    ...(options.providerUrl ? { fallbackUrl: options.providerUrl } : {}),
    onRequest: (_provider, status) => resources.metrics.providerRequests.inc({ status }),
  });
  // Readiness reports the provider of the default model's first target.
  const readinessProvider = providers.get(firstProviderOf(resources))?.provider;
  if (!readinessProvider) throw new Error('no model provider: set LLM_BASE_URL');
  resources.metrics.readCoolingTargetsWith(() => coolingTargets(resources.models, resources.targetCooldowns));
  // Listening comes first: a port in use stops the start before this process takes any job.
  const health = options.withHealthServer ? await startHealthServer(resources, readinessProvider) : undefined;
  const blocking = connectRedis(resources.redisTarget, 'queue');
  const subscriber = connectRedis(resources.redisTarget, 'subscriber');
  for (const connection of [blocking, subscriber]) connection.on('error', (error) => logger.debug({ err: error }, 'worker redis error'));

  const { shared, batchRunner, turnService } = sharedDeps(resources);
  const queueSettings = {
    connection: blocking,
    prefix: resources.queuePrefix,
    concurrency: config.WORKER_CONCURRENCY,
    lockDurationMs: config.LOCK_DURATION_MS,
    stalledIntervalMs: config.STALLED_INTERVAL_MS,
    maxStalledCount: config.MAX_STALLED_COUNT,
  };
  // One subscription per process: a cancelled turn's turn and tool jobs running here stop.
  const cancellations = await TurnCancellations.subscribe(subscriber, config.REDIS_PREFIX);
  // A step's server calls run in this process at once, their flow holding them (local-tool-slots.ts).
  // A held call's queued job looks at it again after half a lock: its holder's lock lapses within one.
  const localHolds = { alive: async (lockKey: string) => (await resources.redis.exists(lockKey)) === 1, recheckMs: Math.ceil(config.LOCK_DURATION_MS / 2) };
  const toolDeps = { ...shared, localHolds };
  const localTools = new LocalToolSlots({ ...toolDeps, logger }, { slots: config.WORKER_CONCURRENCY });
  const turnRunnerDeps: TurnRunnerDeps = {
    ...shared,
    models: resources.models,
    providers,
    cooldowns: resources.targetCooldowns,
    providerCalls: meteredLedger(resources.providerCalls, resources.metrics),
    compactions: resources.compactions,
    budgets: new BudgetsRepository(resources.db),
    localTools,
    logger,
    ...turnRunnerSettings(config, resources.models.defaultModel),
    ...(options.now ? { now: options.now } : {}),
  };
  const turnWorker = await startTurnWorker({ ...queueSettings, batchConcurrency: config.BATCH_TURNS_PER_WORKER, cancellations, deps: turnRunnerDeps });
  // Turns this process's API admits start here at once, their jobs held as leases (local-turn-slots.ts).
  const localTurns = config.LOCAL_TURN_STARTS
    ? new LocalTurnSlots(
        {
          runner: turnRunnerDeps,
          turnQueue: resources.turnQueue,
          cancellations,
          queueSlots: turnWorker.interactive,
          redis: resources.redis,
          redisPrefix: config.REDIS_PREFIX,
          metrics: resources.metrics,
          logger,
        },
        { slots: config.WORKER_CONCURRENCY, leaseMs: config.LOCK_DURATION_MS },
      )
    : undefined;
  const toolWorker = await startToolWorker({ ...queueSettings, cancellations, deps: toolDeps, logger, localTools });
  const reconciler = startReconciler(
    { ...shared, turnQueue: resources.turnQueue, batchTurnQueue: resources.batchTurnQueue, logger },
    { intervalMs: config.RECONCILE_INTERVAL_MS, maxTurnsPerPass: config.RECONCILE_MAX_TURNS_PER_PASS },
  );
  const batchRepair = startBatchRepair(batchRunner, { intervalMs: config.RECONCILE_INTERVAL_MS, logger });
  const retention =
    config.OPENAI_RETENTION_DAYS > 0
      ? startConversationRetention(
          { db: resources.db, conversations: resources.conversations },
          { intervalMs: config.RECONCILE_INTERVAL_MS, retentionDays: config.OPENAI_RETENTION_DAYS, logger },
        )
      : null;
  const scheduleTicker = startScheduleTicker(
    new ScheduleRunner({
      schedules: resources.schedules,
      conversations: resources.conversations,
      turns: resources.turns,
      turnService,
      logger,
      // Half the pool at most: the turns this worker runs need the rest.
      concurrency: resources.db.kind === 'pglite' ? 1 : Math.max(1, Math.min(FIRE_CONCURRENCY, Math.floor(config.DATABASE_POOL_SIZE / 2))),
    }),
    { logger },
  );
  const webhookWorker = startWebhookWorker(
    { ...queueSettings, concurrency: config.WEBHOOK_CONCURRENCY },
    {
      webhooks: resources.webhooks,
      batches: new DeliveryBatches(resources.webhooks),
      secretBox: resources.secretBox,
      connections: new WebhookConnections(),
      slots: new PerKeyCap(config.WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT),
      metrics: resources.metrics,
      logger,
      settings: {
        timeoutMs: config.WEBHOOK_TIMEOUT_MS,
        schedule: { delaysMs: config.WEBHOOK_RETRY_DELAYS_MS, retryForMs: config.WEBHOOK_RETRY_FOR_MS },
        disableAfterMs: config.WEBHOOK_DISABLE_AFTER_MS,
        allowPrivateNetworks: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
      },
    },
  );
  const webhookRelay = startWebhookRelay(
    {
      webhooks: resources.webhooks,
      webhookQueue: resources.webhookQueue,
      logger,
      wakeups: (listener) => resources.db.listen(webhookWakeupChannel(config.DATABASE_SCHEMA), meteredChannelListener(listener, resources.metrics, 'webhook_relay')),
    },
    { intervalMs: config.WEBHOOK_RELAY_INTERVAL_MS },
  );
  // Attached last: the API hands turns over only to a worker that is up.
  const detachLocalTurns = localTurns ? resources.turnHandOff.attach(localTurns.start) : () => undefined;

  return {
    ...(health ? { port: health.port } : {}),
    async close() {
      await reconciler.stop();
      await batchRepair.stop();
      await retention?.stop();
      await scheduleTicker.stop();
      await webhookRelay.stop();
      detachLocalTurns();
      await Promise.all([
        localTurns?.close(config.SHUTDOWN_GRACE_MS),
        turnWorker.close(config.SHUTDOWN_GRACE_MS),
        toolWorker.close(config.SHUTDOWN_GRACE_MS),
        webhookWorker.close(config.SHUTDOWN_GRACE_MS),
      ]);
      cancellations.close();
      if (health) await new Promise((resolve) => health.server.close(resolve));
      blocking.disconnect();
      subscriber.disconnect();
    },
  };
}

function firstProviderOf(resources: Resources): string {
  const lookup = resources.models.lookup(resources.models.defaultModel);
  return lookup.ok ? lookup.route.targets[0]!.provider : '';
}

/** /healthz and /metrics on PORT. */
async function startHealthServer(resources: Resources, provider: ModelProvider): Promise<{ server: http.Server; port: number }> {
  const app = express();
  const checkReady = createReadinessCheck({ redis: resources.redis, db: resources.db, provider });
  app.use(healthRouter({ checkReady, registry: resources.metrics.registry }));
  const server = http.createServer(app);
  const port = await listen(server, resources.config.PORT, resources.config.HOST);
  return { server, port };
}

/** What the turn worker, the tool worker and the reconciler all use. */
function sharedDeps(resources: Resources) {
  const { config } = resources;
  const common = {
    db: resources.db,
    turns: resources.turns,
    conversations: resources.conversations,
    messages: resources.messages,
    toolCalls: resources.toolCalls,
    toolApprovals: resources.toolApprovals,
    invocations: resources.invocations,
    tools: resources.tools,
    eventLog: resources.eventLog,
    flows: resources.flows,
    toolQueue: resources.toolQueue,
    enqueueTurn: resources.enqueueTurn,
    enqueueResume: resources.enqueueResume,
    metrics: resources.metrics,
    redis: resources.redis,
    redisPrefix: config.REDIS_PREFIX,
    tracer: resources.tracer,
  };
  // Batch items move on where their turns end: here, in the workers.
  const { batchRunner, onTurnEnded, turnService } = turnServiceWithBatches(resources, { ...common, maxActiveTurnsPerUser: config.MAX_ACTIVE_TURNS_PER_USER });
  return { shared: { ...common, onTurnEnded }, batchRunner, turnService };
}

/** A turn's defaults and limits, and the provider retry policy, from the config. */
function turnRunnerSettings(config: Config, defaultModel: string): Pick<TurnRunnerDeps, 'defaults' | 'retryPolicy' | 'limits'> {
  return {
    defaults: { model: defaultModel, maxSteps: config.DEFAULT_MAX_STEPS, ...(config.MAX_HISTORY_MESSAGES ? { maxHistoryMessages: config.MAX_HISTORY_MESSAGES } : {}) },
    retryPolicy: {
      maxRetries: config.PROVIDER_MAX_RETRIES,
      baseDelayMs: config.PROVIDER_RETRY_BASE_MS,
      maxDelayMs: config.PROVIDER_RETRY_MAX_MS,
      maxRetryAfterMs: config.PROVIDER_MAX_RETRY_AFTER_MS,
    },
    limits: { maxToolCallsPerStep: config.MAX_TOOL_CALLS_PER_STEP },
  };
}
