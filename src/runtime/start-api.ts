import http from 'node:http';
import { createApiApp } from '../api/app';
import { createUserRateLimiter } from '../api/user-rate-limit';
import { createTurnEventStreamer, type ConversationEventSource } from '../api/turn-event-stream';
import { Authenticator } from '../auth/authenticator';
import { WsTickets } from '../auth/ws-tickets';
import { subscribeToConversation } from '../subscriptions/conversation-subscription';
import { createGateway } from '../gateway/gateway';
import { LiveEvents } from '../store/live-events';
import { answerClientToolCall } from '../turns/client-tool-answers';
import { isBackendUnavailable } from '../errors/backend-unavailable';
import { InflightState } from '../turns/inflight-state';
import { TurnService } from '../turns/turn-service';
import { connectRedis } from './redis-connection';
import type { Resources } from './resources';
import { checkReady, listen } from './server-helpers';
import { OpenConnections } from '../auth/open-connections';
import { startRevocationWatch } from '../auth/revocation-watch';
import { QueueEvents } from 'bullmq';
import { TOOL_QUEUE } from '../queue/tool-queue';
import { SessionTokens } from '../auth/session-tokens';

export interface RunningApi {
  port: number;
  url: string;
  close(): Promise<void>;
}

/** The HTTP API and the websocket gateway on one server. */
export async function startApi(resources: Resources): Promise<RunningApi> {
  const { config, logger } = resources;
  const subscriber = connectRedis(resources.redisUrl, 'subscriber');
  subscriber.on('error', (error) => logger.debug({ err: error }, 'live events redis error'));
  const liveEvents = new LiveEvents(subscriber, (conversationId) => resources.eventLog.channel(conversationId));
  const tickets = new WsTickets(resources.redis, config.REDIS_PREFIX, config.WS_TICKET_TTL_SECONDS);
  const sessionTokens = new SessionTokens(resources.redis, config.REDIS_PREFIX);
  const authenticator = new Authenticator(resources.users, tickets, sessionTokens);
  const connections = new OpenConnections();
  // Invocations wait for their tool jobs; QueueEvents reads with a blocking connection of its own.
  const toolEventsConnection = connectRedis(resources.redisUrl, 'blocking');
  const toolEvents = new QueueEvents(TOOL_QUEUE, { connection: toolEventsConnection, prefix: config.REDIS_PREFIX });
  toolEvents.on('error', (error) => logger.debug({ err: error }, 'tool queue events redis error'));
  const revocations = await startRevocationWatch({
    connections,
    revokedAmong: (keyIds) => resources.users.revokedAmong(keyIds),
    subscriber,
    prefix: config.REDIS_PREFIX,
    intervalMs: config.KEY_REVOCATION_CHECK_MS,
    logger,
  });
  const turnService = new TurnService({
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
  });
  const clientAnswerDeps = {
    db: resources.db,
    conversations: resources.conversations,
    turns: resources.turns,
    toolCalls: resources.toolCalls,
    eventLog: resources.eventLog,
    enqueueResume: resources.enqueueResume,
  };

  const eventSource: ConversationEventSource = {
    read: (conversationId, afterSeq) => resources.eventLog.read(conversationId, afterSeq),
    window: (conversationId) => resources.eventLog.window(conversationId),
    subscribe: (input) =>
      subscribeToConversation(
        { eventLog: resources.eventLog, liveEvents, onReconnect: (listener) => liveEvents.onReconnect(listener) },
        input,
      ),
  };
  const eventStream = createTurnEventStreamer(eventSource, { connections, maxBufferedBytes: config.WS_MAX_BUFFERED_BYTES });

  const app = createApiApp({
    logger,
    metrics: resources.metrics,
    maxBodyBytes: config.MAX_BODY_BYTES,
    adminToken: config.ADMIN_TOKEN,
    authenticator,
    rateLimiter: createUserRateLimiter({ redis: resources.redis, prefix: config.REDIS_PREFIX, perMinute: config.RATE_LIMIT_PER_MINUTE }),
    tickets,
    allowedOrigins: config.ALLOWED_ORIGINS,
    sessionTokens,
    sessionTokenTtlSeconds: config.SESSION_TOKEN_TTL_SECONDS,
    users: resources.users,
    conversations: resources.conversations,
    messages: resources.messages,
    turns: resources.turns,
    toolCalls: resources.toolCalls,
    tools: resources.tools,
    userAllowedTools: (userId) => resources.users.allowedTools(userId),
    toolInvocations: { invocations: resources.invocations, toolQueue: resources.toolQueue, toolEvents },
    answerClientTool: (input) => answerClientToolCall(clientAnswerDeps, input),
    // The buffers are a convenience: while Redis is down the turn is still shown, without them.
    inflight: (turnId) =>
      InflightState.read(resources.redis, InflightState.keyFor(config.REDIS_PREFIX, turnId)).catch((error: unknown) => {
        if (isBackendUnavailable(error)) return null;
        throw error;
      }),
    turnService,
    eventStream,
    latestSeq: (conversationId) => resources.eventLog.latestSeq(conversationId),
    checkReady: () => checkReady(resources),
  });

  const server = http.createServer(app);
  const gateway = createGateway({
    server,
    authenticate: (req) => authenticator.fromUpgradeRequest(req),
    connections,
    ownsConversation: async (userId, conversationId) => (await resources.conversations.get(userId, conversationId)) !== null,
    subscribe: eventSource.subscribe,
    answerToolCall: async (userId, frame) => {
      const outcome = await answerClientToolCall(clientAnswerDeps, {
        userId,
        turnId: frame.turnId,
        toolCallId: frame.toolCallId,
        answer: 'error' in frame ? { error: frame.error } : { result: frame.result },
      });
      if (outcome.kind === 'not_found') return { ok: false, code: 'not_found', message: 'no such tool call' };
      if (outcome.kind === 'not_client_tool') return { ok: false, code: 'bad_frame', message: 'this call is not a client tool call' };
      return { ok: true, accepted: outcome.kind === 'accepted' };
    },
    allowedOrigins: config.ALLOWED_ORIGINS,
    maxFrameBytes: config.WS_MAX_FRAME_BYTES,
    maxBufferedBytes: config.WS_MAX_BUFFERED_BYTES,
    heartbeatMs: config.WS_HEARTBEAT_MS,
    logger,
  });
  resources.metrics.countWebsocketClientsWith(() => gateway.clientCount());
  const port = await listen(server, config.PORT, config.HOST);

  return {
    port,
    url: `http://${config.HOST}:${port}`,
    /**
     * Drains: no new connection is taken; websockets close with 1012 and SSE streams end after
     * the last event they sent (clients resume elsewhere by seq); requests under way finish,
     * for SHUTDOWN_GRACE_MS at most, then what is left is cut.
     */
    async close() {
      const drained = new Promise((resolve) => server.close(resolve));
      server.closeIdleConnections();
      await gateway.close('server shutting down: reconnect and subscribe with after');
      eventStream.endAll();
      const cut = setTimeout(() => server.closeAllConnections(), config.SHUTDOWN_GRACE_MS);
      await drained;
      clearTimeout(cut);
      await revocations.stop();
      await toolEvents.close();
      toolEventsConnection.disconnect();
      subscriber.disconnect();
    },
  };
}
