import http from 'node:http';
import express from 'express';
import { healthRouter } from '../api/health-router';
import { createOpenAiCompatibleProvider } from '../providers/openai-compatible-provider';
import { startToolWorker } from '../turns/tool-worker';
import { TurnCancellations } from '../turns/turn-cancellations';
import { startReconciler } from '../turns/turn-reconciler';
import { startTurnWorker } from '../turns/turn-worker';
import { connectRedis } from './redis-connection';
import type { Resources } from './resources';
import { checkReady, listen } from './server-helpers';

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
  options: { withHealthServer: boolean; providerUrl?: string },
): Promise<RunningWorker> {
  const { config, logger } = resources;
  const baseURL = config.LLM_BASE_URL ?? options.providerUrl;
  if (!baseURL) throw new Error('no model provider: set LLM_BASE_URL');
  const provider = createOpenAiCompatibleProvider({
    baseURL,
    ...(config.LLM_API_KEY ? { apiKey: config.LLM_API_KEY } : {}),
    idleTimeoutMs: config.PROVIDER_IDLE_TIMEOUT_MS,
  });
  const blocking = connectRedis(resources.redisUrl, 'blocking');
  const subscriber = connectRedis(resources.redisUrl, 'subscriber');
  for (const connection of [blocking, subscriber]) connection.on('error', (error) => logger.debug({ err: error }, 'worker redis error'));

  const shared = {
    db: resources.db,
    turns: resources.turns,
    conversations: resources.conversations,
    messages: resources.messages,
    toolCalls: resources.toolCalls,
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
  };
  const queueSettings = {
    connection: blocking,
    prefix: config.REDIS_PREFIX,
    concurrency: config.WORKER_CONCURRENCY,
    lockDurationMs: config.LOCK_DURATION_MS,
    stalledIntervalMs: config.STALLED_INTERVAL_MS,
    maxStalledCount: config.MAX_STALLED_COUNT,
  };
  // One subscription per process: a cancelled turn's turn and tool jobs running here stop.
  const cancellations = await TurnCancellations.subscribe(subscriber, config.REDIS_PREFIX);
  const turnWorker = await startTurnWorker({
    ...queueSettings,
    cancellations,
    deps: {
      ...shared,
      provider,
      logger,
      defaults: { model: config.LLM_MODEL, maxSteps: config.DEFAULT_MAX_STEPS },
      retryPolicy: {
        maxRetries: config.PROVIDER_MAX_RETRIES,
        baseDelayMs: config.PROVIDER_RETRY_BASE_MS,
        maxDelayMs: config.PROVIDER_RETRY_MAX_MS,
        maxRetryAfterMs: config.PROVIDER_MAX_RETRY_AFTER_MS,
      },
      limits: { maxToolCallsPerStep: config.MAX_TOOL_CALLS_PER_STEP },
    },
  });
  const toolWorker = await startToolWorker({ ...queueSettings, cancellations, deps: shared, logger });
  const reconciler = startReconciler(
    { ...shared, turnQueue: resources.turnQueue, logger },
    { intervalMs: config.RECONCILE_INTERVAL_MS, maxTurnsPerPass: config.RECONCILE_MAX_TURNS_PER_PASS },
  );

  let server: http.Server | undefined;
  let port: number | undefined;
  if (options.withHealthServer) {
    const app = express();
    app.use(healthRouter({ checkReady: () => checkReady(resources), registry: resources.metrics.registry }));
    server = http.createServer(app);
    port = await listen(server, config.PORT, config.HOST);
  }

  return {
    ...(port !== undefined ? { port } : {}),
    async close() {
      await reconciler.stop();
      await Promise.all([turnWorker.close(config.SHUTDOWN_GRACE_MS), toolWorker.close(config.SHUTDOWN_GRACE_MS)]);
      cancellations.close();
      if (server) await new Promise((resolve) => server!.close(resolve));
      blocking.disconnect();
      subscriber.disconnect();
    },
  };
}
