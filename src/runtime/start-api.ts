import http from 'node:http';
import os from 'node:os';
import type { Express } from 'express';
import { createApiApp, type ApiDeps } from '../api/app';
import { createUserRateLimiter, type UserRateLimiter } from '../api/user-rate-limit';
import { createTurnEventStreamer, type ConversationEventSource, type TurnEventStreamer } from '../api/turn-event-stream';
import { Authenticator } from '../auth/authenticator';
import { WsTickets } from '../auth/ws-tickets';
import { subscribeToConversation } from '../subscriptions/conversation-subscription';
import { replayPage } from '../subscriptions/replay-page';
import { createGateway, type Gateway } from '../gateway/gateway';
import { LiveEvents } from '../event-log/live-events';
import { decideApproval, decisionRefusal, type DecisionInput, type DecisionOutcome } from '../tool-calls/tool-approvals';
import type { ToolApprovalsRepository } from '../store/tool-approvals-repository';
import { answerClientToolCall } from '../tool-calls/client-tool-answers';
import { isBackendUnavailable } from '../errors/backend-unavailable';
import { InflightState } from '../event-log/inflight-state';
import { connectRedis, type RedisClient } from '../redis/redis-connection';
import type { Resources } from './resources';
import { httpServerTimeouts, listen } from './server-helpers';
import { createReadinessCheck } from './readiness';
import { configuredProvider } from '../providers/configured-provider';
import { OpenConnections } from '../auth/open-connections';
import { clientAddressOf, FailedAuthGuard } from '../auth/failed-auth-guard';
import type { AuthGuard } from '../api/require-user';
import { createUiMessageStreamer, type UiMessageStreamer } from '../api/ui-message-stream';
import { turnServiceWithBatches } from './batch-runner-for';
import { batchChannel, followBatch, type BatchProgressSource } from '../batches/batch-progress';
import { LiveSseStreams } from '../api/live-sse';
import { SubmissionSlots } from '../api/submission-slots';
import { startRevocationWatch } from '../auth/revocation-watch';
import { QueueEventsOnDemand, queueEventsReader } from '../queue/queue-events-on-demand';
import { SessionTokens } from '../auth/session-tokens';
import { VerifiedKeyCache } from '../auth/verified-key-cache';
import { ResponsesService } from '../openai-compat/responses-service';
import { OpenAiBatchesService } from '../openai-compat/openai-batches-service';
import { createResponseStreamer, type ResponseStreamer } from '../api/openai-response-stream';
import { usableToolsByName } from '../api/usable-tools';
import { listModels } from '../models/model-listing';

export interface RunningApi {
  port: number;
  url: string;
  /** The HTTP API's express app (its routes are what GET /openapi.json documents). */
  app: Express;
  /**
   * Drains: no new connection is taken; websockets close with 1012 and SSE streams end after
   * the last event they sent (clients resume elsewhere by seq); requests under way finish,
   * for SHUTDOWN_GRACE_MS at most, then what is left is cut.
   */
  close(): Promise<void>;
}

/**
 * The HTTP API and the websocket gateway on one server:
 * 1. the subscriber connection and the conversations' live events on it;
 * 2. authentication (keys, tickets, session tokens, rate and failed-auth limits, open
 *    connections), with the watch that closes what a revoked key opened;
 * 3. the services the routes call (turns, batches, client tool answers);
 * 4. the event streams (SSE, the UI message stream, batch progress);
 * 5. the express app and the gateway on one HTTP server, listening.
 */
export async function startApi(resources: Resources): Promise<RunningApi> {
  const { config, logger } = resources;
  const subscriber = connectRedis(resources.redisTarget, 'subscriber');
  subscriber.on('error', (error) => logger.debug({ err: error }, 'live events redis error'));
  const liveEvents = new LiveEvents(subscriber, (conversationId) => resources.eventLog.channel(conversationId), { sharded: resources.eventLog.sharded });
  const auth = createAuth(resources);
  const toolEvents = createToolQueueEvents(resources);
  const revocations = await startRevocationWatch({
    connections: auth.connections,
    forgetKeys: () => auth.verifiedKeys.clear(),
    revokedAmong: (keyIds) => resources.users.revokedAmong(keyIds),
    subscriber,
    prefix: config.REDIS_PREFIX,
    intervalMs: config.KEY_REVOCATION_CHECK_MS,
    logger,
  });
  const services = createServices(resources);
  const streams = createStreams(resources, auth, subscriber, liveEvents, services);
  const app = createApiApp(apiDeps(resources, auth, services, streams, toolEvents));
  const server = http.createServer(httpServerTimeouts(config), app);
  const gateway = startGateway(resources, server, auth, services, streams);
  const port = await listen(server, config.PORT, config.HOST);

  return {
    port,
    url: `http://${config.HOST}:${port}`,
    app,
    async close() {
      await drain(server, gateway, streams, config.SHUTDOWN_GRACE_MS);
      await revocations.stop();
      await toolEvents.close();
      subscriber.disconnect();
    },
  };
}

/** Who a request or a handshake is, and how much it may do; shared by the app and the gateway. */
interface ApiAuth {
  tickets: WsTickets;
  sessionTokens: SessionTokens;
  verifiedKeys: VerifiedKeyCache;
  authenticator: Authenticator;
  connections: OpenConnections;
  rateLimiter: UserRateLimiter;
  authGuard: AuthGuard;
}

function createAuth(resources: Resources): ApiAuth {
  const { config } = resources;
  const tickets = new WsTickets(resources.redis, config.REDIS_PREFIX, config.WS_TICKET_TTL_SECONDS);
  const sessionTokens = new SessionTokens(resources.redis, config.REDIS_PREFIX);
  const verifiedKeys = new VerifiedKeyCache(resources.users, config.API_KEY_CACHE_TTL_MS);
  return {
    tickets,
    sessionTokens,
    verifiedKeys,
    authenticator: new Authenticator(verifiedKeys, tickets, sessionTokens),
    connections: new OpenConnections(),
    // One count per user for HTTP requests and websocket handshakes alike.
    rateLimiter: createUserRateLimiter({ redis: resources.redis, prefix: config.REDIS_PREFIX, perMinute: config.RATE_LIMIT_PER_MINUTE }),
    authGuard: { failures: new FailedAuthGuard(config.AUTH_FAILURES_PER_MINUTE), addressOf: clientAddressOf(config.TRUST_PROXY) },
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

interface ApiServices extends ReturnType<typeof turnServiceWithBatches> {
  answerClientTool: ApiDeps['answerClientTool'];
  decideApproval: (input: DecisionInput) => Promise<DecisionOutcome>;
  toolApprovals: ToolApprovalsRepository;
  responses: ResponsesService;
}

function createServices(resources: Resources): ApiServices {
  const { config } = resources;
  const turnServices = turnServiceWithBatches(resources, {
    db: resources.db,
    turns: resources.turns,
    conversations: resources.conversations,
    messages: resources.messages,
    toolCalls: resources.toolCalls,
    eventLog: resources.eventLog,
    enqueueTurn: resources.enqueueTurn,
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
  const approvalDeps = { ...clientAnswerDeps, toolApprovals: resources.toolApprovals, tools: resources.tools, toolQueue: resources.toolQueue, metrics: resources.metrics, tracer: resources.tracer };
  resources.metrics.countPendingApprovalsWith(() => resources.toolApprovals.countPending());
  return {
    ...turnServices,
    answerClientTool: (input) => answerClientToolCall(clientAnswerDeps, input),
    decideApproval: (input) => decideApproval(approvalDeps, input),
    toolApprovals: resources.toolApprovals,
    responses: new ResponsesService({
      conversations: resources.conversations,
      messages: resources.messages,
      turns: resources.turns,
      responses: resources.openAiResponses,
      turnService: turnServices.turnService,
      usableTools: (userId) => usableToolsByName({ tools: resources.tools, userAllowedTools: (id) => resources.users.allowedTools(id) }, userId),
      latestSeq: (conversationId) => resources.eventLog.latestSeq(conversationId),
      defaultModel: resources.models.defaultModel,
    }),
  };
}

/** What the API streams to its readers; each ends on close, after the last event it sent. */
interface ApiStreams {
  eventSource: ConversationEventSource;
  eventStream: TurnEventStreamer;
  uiStream: UiMessageStreamer;
  followBatch: ApiDeps['followBatch'];
  batchStreams: LiveSseStreams;
  responseStream: ResponseStreamer;
}

function createStreams(resources: Resources, auth: ApiAuth, subscriber: RedisClient, liveEvents: LiveEvents, services: ApiServices): ApiStreams {
  const { config } = resources;
  const { connections } = auth;
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
  const onSlowReader = () => resources.metrics.slowConsumerDisconnects.inc({ transport: 'sse' });
  const sseOptions = { connections, maxBufferedBytes: config.WS_MAX_BUFFERED_BYTES, heartbeatMs: config.SSE_HEARTBEAT_MS };
  const eventStream = createTurnEventStreamer(eventSource, { ...sseOptions, onSlowReader });
  const batchEvents = new LiveEvents(subscriber, (batchId) => batchChannel(config.REDIS_PREFIX, batchId));
  const batchProgress: BatchProgressSource = {
    get: (batchId) => resources.batches.getAny(batchId),
    listen: (batchId, changed) => batchEvents.listen(batchId, changed),
  };
  const uiStream = createUiMessageStreamer(eventSource, {
    ...sseOptions,
    isClientTool: (toolName) => resources.tools.get(toolName)?.kind === 'client',
    onSlowReader,
  });
  return {
    eventSource,
    eventStream,
    uiStream,
    followBatch: (batchId, options) => followBatch(batchProgress, batchId, options),
    batchStreams: new LiveSseStreams({ ...sseOptions, onSlowReader }),
    responseStream: createResponseStreamer(eventSource, {
      ...sseOptions,
      onSlowReader,
      defaultModel: resources.models.defaultModel,
      storedResponse: (record) => services.responses.object(record),
    }),
  };
}

function apiDeps(resources: Resources, auth: ApiAuth, services: ApiServices, streams: ApiStreams, toolEvents: QueueEventsOnDemand): ApiDeps {
  const { config, logger } = resources;
  // The API streams no completion; it checks the provider only to report it (docs/API.md: /readyz).
  const provider = configuredProvider(config)?.provider;
  const { turnService, batchRunner } = services;
  const batchSubmissionSlots = new SubmissionSlots(config.MAX_BATCH_SUBMISSIONS_IN_FLIGHT);
  const turnBodyBytes = new SubmissionSlots(config.MAX_TURN_BODY_BYTES_IN_FLIGHT);
  const startBatch = (batchId: string) => void batchRunner.pump(batchId).catch((error: unknown) => logger.warn({ err: error, batchId }, 'batch did not start; the repair pass will start it'));
  const userTools = { tools: resources.tools, userAllowedTools: (userId: string) => resources.users.allowedTools(userId) };
  resources.metrics.countBatchSubmissionsWith(() => batchSubmissionSlots.inUse);
  resources.metrics.countTurnBodyBytesWith(() => turnBodyBytes.inUse);
  return {
    logger,
    metrics: resources.metrics,
    maxBodyBytes: config.MAX_BODY_BYTES,
    maxChatBodyBytes: config.MAX_CHAT_BODY_BYTES,
    adminToken: config.ADMIN_TOKEN,
    authenticator: auth.authenticator,
    authGuard: auth.authGuard,
    rateLimiter: auth.rateLimiter,
    tickets: auth.tickets,
    allowedOrigins: config.ALLOWED_ORIGINS,
    sessionTokens: auth.sessionTokens,
    sessionTokenTtlSeconds: config.SESSION_TOKEN_TTL_SECONDS,
    users: resources.users,
    conversations: resources.conversations,
    messages: resources.messages,
    turns: resources.turns,
    toolCalls: resources.toolCalls,
    tools: resources.tools,
    userAllowedTools: (userId) => resources.users.allowedTools(userId),
    toolInvocations: { invocations: resources.invocations, toolQueue: resources.toolQueue, toolEvents },
    answerClientTool: services.answerClientTool,
    decideApproval: services.decideApproval,
    toolApprovals: services.toolApprovals,
    // The buffers are a convenience: while Redis is down the turn is still shown, without them.
    inflight: (turn) =>
      InflightState.read(resources.redis, config.REDIS_PREFIX, turn).catch((error: unknown) => {
        if (isBackendUnavailable(error)) return null;
        throw error;
      }),
    turnService,
    eventStream: streams.eventStream,
    uiStream: streams.uiStream,
    batches: resources.batches,
    openAiBatches: resources.openAiBatches,
    startBatch,
    batchRunner,
    followBatch: streams.followBatch,
    batchStreams: streams.batchStreams,
    maxBatchBytes: config.MAX_BATCH_BYTES,
    maxBatchJsonBytes: config.MAX_BATCH_JSON_BYTES,
    maxBatchItems: config.MAX_BATCH_ITEMS,
    batchSubmissionSlots,
    turnBodyBytes,
    batchSpoolDir: os.tmpdir(),
    webhooks: {
      webhooks: resources.webhooks,
      webhookQueue: resources.webhookQueue,
      secretBox: resources.secretBox,
      allowPrivateNetworks: config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
      maxEndpointsPerUser: config.WEBHOOK_MAX_ENDPOINTS_PER_USER,
    },
    latestSeq: (conversationId) => resources.eventLog.latestSeq(conversationId),
    checkReady: createReadinessCheck({ redis: resources.redis, db: resources.db, ...(provider ? { provider } : {}) }),
    playgroundDir: config.PLAYGROUND_DIR,
    models: { listModels: () => listModels(resources.models, resources.targetCooldowns) },
    providerCalls: resources.providerCalls,
    openAi: {
      files: { files: resources.openAiFiles, maxFileBytes: config.OPENAI_MAX_FILE_BYTES, spoolDir: os.tmpdir() },
      maxBodyBytes: config.MAX_BODY_BYTES,
      turnBodyBytes,
      responses: { responses: services.responses, streamer: streams.responseStream, events: streams.eventSource },
      batches: new OpenAiBatchesService({
        db: resources.db,
        files: resources.openAiFiles,
        openAiBatches: resources.openAiBatches,
        batches: resources.batches,
        submission: {
          batches: resources.batches,
          usableTools: (userId) => usableToolsByName(userTools, userId),
          spoolDir: os.tmpdir(),
          // The file is stored already, within OPENAI_MAX_FILE_BYTES: its lines are read from there.
          maxBatchBytes: Math.max(config.MAX_BATCH_BYTES, config.OPENAI_MAX_FILE_BYTES),
          maxBatchJsonBytes: config.MAX_BATCH_JSON_BYTES,
          maxBatchItems: config.MAX_BATCH_ITEMS,
        },
        runner: batchRunner,
        startBatch,
        defaultModel: resources.models.defaultModel,
      }),
    },
  };
}

/** The websocket gateway on the API's server; its client and subscription counts become gauges. */
function startGateway(resources: Resources, server: http.Server, auth: ApiAuth, services: ApiServices, streams: ApiStreams): Gateway {
  const { config, logger } = resources;
  const gateway = createGateway({
    server,
    authenticate: (req) => auth.authenticator.fromUpgradeRequest(req),
    authGuard: auth.authGuard,
    rateLimiter: auth.rateLimiter,
    connections: auth.connections,
    maxConnectionsPerKey: config.WS_MAX_CONNECTIONS_PER_KEY,
    ownsConversation: async (userId, conversationId) => (await resources.conversations.get(userId, conversationId)) !== null,
    ownsBatch: async (userId, batchId) => (await resources.batches.get(userId, batchId)) !== null,
    followBatch: streams.followBatch,
    subscribe: streams.eventSource.subscribe,
    answerToolCall: async (userId, frame) => {
      const outcome = await services.answerClientTool({
        userId,
        turnId: frame.turnId,
        toolCallId: frame.toolCallId,
        answer: 'error' in frame ? { error: frame.error } : { result: frame.result },
      });
      if (outcome.kind === 'not_found') return { ok: false, code: 'not_found', message: 'no such tool call' };
      if (outcome.kind === 'not_client_tool') return { ok: false, code: 'bad_frame', message: 'this call is not a client tool call' };
      return { ok: true, accepted: outcome.kind === 'accepted' };
    },
    decideApproval: async (userId, frame) => {
      const { type: _type, ...decision } = frame;
      const outcome = await services.decideApproval({ userId, ...decision });
      const refusal = decisionRefusal(outcome);
      if (refusal?.code === 'already_decided') return { ok: false, code: refusal.code, message: refusal.message, details: refusal.decision };
      if (refusal) return { ok: false, code: refusal.code, message: refusal.message };
      return outcome.kind === 'decided' || outcome.kind === 'repeated' ? { ok: true, decision: outcome.decision } : { ok: false, code: 'internal', message: 'no decision' };
    },
    allowedOrigins: config.ALLOWED_ORIGINS,
    maxFrameBytes: config.WS_MAX_FRAME_BYTES,
    maxBufferedBytes: config.WS_MAX_BUFFERED_BYTES,
    heartbeatMs: config.WS_HEARTBEAT_MS,
    logger,
    metrics: resources.metrics,
  });
  resources.metrics.countWebsocketClientsWith(() => gateway.clientCount());
  resources.metrics.countSubscriptionsWith(() => gateway.subscriptionCounts());
  return gateway;
}

/** The server's drain (see {@link RunningApi.close}): streams end first, then requests, cut after `graceMs`. */
async function drain(server: http.Server, gateway: Gateway, streams: ApiStreams, graceMs: number): Promise<void> {
  const drained = new Promise((resolve) => server.close(resolve));
  server.closeIdleConnections();
  await gateway.close('server shutting down: reconnect and subscribe with after');
  streams.eventStream.endAll();
  streams.uiStream.endAll();
  streams.batchStreams.endAll();
  streams.responseStream.endAll();
  const cut = setTimeout(() => server.closeAllConnections(), graceMs);
  await drained;
  clearTimeout(cut);
}
