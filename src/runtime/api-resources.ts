import os from 'node:os';
import type { LiveSseOptions } from '../api/live-sse';
import { SubmissionSlots } from '../api/submission-slots';
import type { ConversationEventSource } from '../api/turn-event-stream';
import { createUserRateLimiter } from '../api/user-rate-limit';
import { Authenticator } from '../auth/authenticator';
import { clientAddressOf, FailedAuthGuard } from '../auth/failed-auth-guard';
import { KeyUsage } from '../auth/key-usage';
import { OpenConnections } from '../auth/open-connections';
import { afterRevocation } from '../auth/revocation-watch';
import { SessionTokens } from '../auth/session-tokens';
import { VerifiedKeyCache } from '../auth/verified-key-cache';
import { WsTickets } from '../auth/ws-tickets';
import { batchChannel, followBatch, type BatchProgressSource } from '../batches/batch-progress';
import { LiveEvents } from '../event-log/live-events';
import { configuredProvider } from '../providers/configured-provider';
import { QueueEventsOnDemand, queueEventsReader } from '../queue/queue-events-on-demand';
import { connectRedis, type RedisClient } from '../redis/redis-connection';
import { subscribeToConversation } from '../subscriptions/conversation-subscription';
import { replayPage } from '../subscriptions/replay-page';
import { answerClientToolCall } from '../tool-calls/client-tool-answers';
import { decideApproval } from '../tool-calls/tool-approvals';
import { turnServiceWithBatches } from './batch-runner-for';
import { createReadinessCheck } from './readiness';
import type { Resources } from './resources';

/** The API process's resources: the process's, and what the API adds (see {@link createApiResources}). */
export type ApiResources = ReturnType<typeof createApiResources>;

/**
 * The one resources object of an API process: the process's Resources and, made once, what the
 * API adds to them. The route families (runtime/api-route-families.ts) and the gateway each read
 * the part they declare; nothing is copied out of it per route.
 * 1. authentication: keys, tickets, session tokens, rate and failed-auth limits, open connections;
 * 2. the services routes and the gateway call: turns, batches, client tool answers, approvals;
 * 3. the conversations' events (replay, then live, on `subscriber`), batch progress, and the
 *    settings every SSE stream shares;
 * 4. the readiness check, the tool queue's events (read while an invocation waits), where
 *    uploads wait on disk.
 */
export function createApiResources(resources: Resources, subscriber: RedisClient) {
  const { config } = resources;
  const auth = createAuth(resources);
  const services = createServices(resources);
  const liveEvents = new LiveEvents(subscriber, (conversationId) => resources.eventLog.channel(conversationId), { sharded: resources.eventLog.sharded });
  const eventSource: ConversationEventSource = {
    read: (conversationId, afterSeq, page) => resources.eventLog.read(conversationId, afterSeq, page),
    window: (conversationId) => resources.eventLog.window(conversationId),
    // Websocket and SSE readers alike may hold WS_MAX_BUFFERED_BYTES: a page is sized to it.
    subscribe: (input) =>
      subscribeToConversation(
        { eventLog: resources.eventLog, liveEvents, onReconnect: (listener) => liveEvents.onReconnect(listener), page: replayPage(config.WS_MAX_BUFFERED_BYTES) },
        input,
      ),
  };
  const batchEvents = new LiveEvents(subscriber, (batchId) => batchChannel(config.REDIS_PREFIX, batchId));
  const batchProgress: BatchProgressSource = {
    get: (batchId) => resources.batches.getAny(batchId),
    listen: (batchId, changed) => batchEvents.listen(batchId, changed),
  };
  const sse: LiveSseOptions = {
    connections: auth.connections,
    maxBufferedBytes: config.WS_MAX_BUFFERED_BYTES,
    heartbeatMs: config.SSE_HEARTBEAT_MS,
    onSlowReader: () => resources.metrics.slowConsumerDisconnects.inc({ transport: 'sse' }),
  };
  // MAX_TURN_BODY_BYTES_IN_FLIGHT: the bodies of requests that stay open for their turn
  // (`POST /api/chat`, `POST /openai/v1/responses`) this process reads at once.
  const turnBodyBytes = new SubmissionSlots(config.MAX_TURN_BODY_BYTES_IN_FLIGHT);
  resources.metrics.countTurnBodyBytesWith(() => turnBodyBytes.inUse);
  // The API streams no completion; it checks the provider only to report it (docs/API.md: /readyz).
  const provider = configuredProvider(config)?.provider;
  return {
    ...resources,
    ...auth,
    ...services,
    eventSource,
    followBatch: (batchId: string, options: Parameters<typeof followBatch>[2]) => followBatch(batchProgress, batchId, options),
    sse,
    turnBodyBytes,
    checkReady: createReadinessCheck({ redis: resources.redis, db: resources.db, ...(provider ? { provider } : {}) }),
    toolEvents: createToolQueueEvents(resources),
    /** Where uploads and JSONL submissions wait on disk while their bodies are read. */
    spoolDir: os.tmpdir(),
  };
}

/** Who a request or a handshake is, and how much it may do; shared by the app and the gateway. */
function createAuth(resources: Resources) {
  const { config } = resources;
  const tickets = new WsTickets(resources.redis, config.REDIS_PREFIX, config.WS_TICKET_TTL_SECONDS);
  const sessionTokens = new SessionTokens(resources.redis, config.REDIS_PREFIX);
  const verifiedKeys = new VerifiedKeyCache(resources.users, config.API_KEY_CACHE_TTL_MS);
  const keyUsage = new KeyUsage(
    (keyId) => resources.users.touchApiKey(keyId),
    (error, keyId) => resources.logger.debug({ err: error, keyId }, "could not record a key's last use; the next use tries again"),
  );
  const forget = { forgetKeys: () => verifiedKeys.clear(), redis: resources.redis, prefix: config.REDIS_PREFIX, logger: resources.logger };
  return {
    tickets,
    sessionTokens,
    verifiedKeys,
    authenticator: new Authenticator(verifiedKeys, tickets, sessionTokens, (keyId) => keyUsage.used(keyId)),
    /** A key revoked over HTTP (its own or the admin's routes): refused here at once, and announced. */
    afterRevocation: (keyId: string) => afterRevocation(forget, keyId),
    connections: new OpenConnections(),
    // One count per user for HTTP requests and websocket handshakes alike.
    rateLimiter: createUserRateLimiter({ redis: resources.redis, prefix: config.REDIS_PREFIX, perMinute: config.RATE_LIMIT_PER_MINUTE }),
    authGuard: { failures: new FailedAuthGuard(config.AUTH_FAILURES_PER_MINUTE), addressOf: clientAddressOf(config.TRUST_PROXY) },
  };
}

/** The turn service and batch runner, a stored batch's start, client tool answers and approval decisions. */
function createServices(resources: Resources) {
  const { config, logger } = resources;
  const turnServices = turnServiceWithBatches(resources, {
    db: resources.db,
    turns: resources.turns,
    conversations: resources.conversations,
    messages: resources.messages,
    toolCalls: resources.toolCalls,
    eventLog: resources.eventLog,
    enqueueTurn: resources.enqueueTurn,
    startHere: (turn) => resources.turnHandOff.offer(turn),
    metrics: resources.metrics,
    redis: resources.redis,
    redisPrefix: config.REDIS_PREFIX,
    maxActiveTurnsPerUser: config.MAX_ACTIVE_TURNS_PER_USER,
    tracer: resources.tracer,
  });
  const clientAnswerDeps = {
    db: resources.db,
    conversations: resources.conversations,
    turns: resources.turns,
    toolCalls: resources.toolCalls,
    eventLog: resources.eventLog,
    enqueueResume: resources.enqueueResume,
  };
  const approvalDeps = {
    ...clientAnswerDeps,
    toolApprovals: resources.toolApprovals,
    tools: resources.tools,
    toolQueue: resources.toolQueue,
    metrics: resources.metrics,
    tracer: resources.tracer,
  };
  resources.metrics.countPendingApprovalsWith(() => resources.toolApprovals.countPending());
  const { batchRunner } = turnServices;
  return {
    ...turnServices,
    /** Starts a stored batch's first items in the background: its submission answers at once. */
    startBatch: (batchId: string) =>
      void batchRunner.pump(batchId).catch((error: unknown) => logger.warn({ err: error, batchId }, 'batch did not start; the repair pass will start it')),
    answerClientTool: (input: Parameters<typeof answerClientToolCall>[1]) => answerClientToolCall(clientAnswerDeps, input),
    decideApproval: (input: Parameters<typeof decideApproval>[1]) => decideApproval(approvalDeps, input),
  };
}

/** Invocations wait for their tool jobs, reading the tool queue's events only meanwhile. */
function createToolQueueEvents(resources: Resources): QueueEventsOnDemand {
  return new QueueEventsOnDemand({
    idleMs: 10_000,
    ...queueEventsReader(resources.toolQueue, {
      redis: resources.redis,
      connect: () => connectRedis(resources.redisTarget, 'queue'),
      onError: (error) => resources.logger.debug({ err: error }, 'tool queue events redis error'),
    }),
  });
}
