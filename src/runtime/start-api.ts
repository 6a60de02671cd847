import http from 'node:http';
import type { Express } from 'express';
import { createApiApp } from '../api/app';
import { startRevocationWatch } from '../auth/revocation-watch';
import { createGateway, type Gateway } from '../gateway/gateway';
import { connectRedis } from '../redis/redis-connection';
import { decisionRefusal } from '../tool-calls/tool-approvals';
import { createApiResources, type ApiResources } from './api-resources';
import { apiRouteFamilies } from './api-route-families';
import type { Resources } from './resources';
import { httpServerTimeouts, listen } from './server-helpers';

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
 * 1. the subscriber connection, and the API's resources on it (api-resources.ts);
 * 2. the watch that closes what a revoked key opened;
 * 3. the route families mounted on the express app (api-route-families.ts);
 * 4. the app and the gateway on one HTTP server, listening.
 */
export async function startApi(resources: Resources): Promise<RunningApi> {
  const { config, logger } = resources;
  const subscriber = connectRedis(resources.redisTarget, 'subscriber');
  subscriber.on('error', (error) => logger.debug({ err: error }, 'live events redis error'));
  const api = createApiResources(resources, subscriber);
  const revocations = await startRevocationWatch({
    connections: api.connections,
    forgetKeys: () => api.verifiedKeys.clear(),
    revokedAmong: (keyIds) => resources.users.revokedAmong(keyIds),
    subscriber,
    prefix: config.REDIS_PREFIX,
    intervalMs: config.KEY_REVOCATION_CHECK_MS,
    logger,
  });
  const { app, endStreams } = createApiApp(api, apiRouteFamilies);
  const server = http.createServer(httpServerTimeouts(config), app);
  const gateway = startGateway(api, server);
  const port = await listen(server, config.PORT, config.HOST);

  return {
    port,
    url: `http://${config.HOST}:${port}`,
    app,
    async close() {
      await drain(server, gateway, endStreams, config.SHUTDOWN_GRACE_MS);
      await revocations.stop();
      await api.toolEvents.close();
      subscriber.disconnect();
    },
  };
}

/** The websocket gateway on the API's server; its client and subscription counts become gauges. */
function startGateway(api: ApiResources, server: http.Server): Gateway {
  const { config, logger } = api;
  const gateway = createGateway({
    server,
    authenticate: (req) => api.authenticator.fromUpgradeRequest(req),
    authGuard: api.authGuard,
    rateLimiter: api.rateLimiter,
    connections: api.connections,
    maxConnectionsPerKey: config.WS_MAX_CONNECTIONS_PER_KEY,
    ownsConversation: async (userId, conversationId) => (await api.conversations.get(userId, conversationId)) !== null,
    ownsBatch: async (userId, batchId) => (await api.batches.get(userId, batchId)) !== null,
    followBatch: api.followBatch,
    subscribe: api.eventSource.subscribe,
    answerToolCall: async (userId, frame) => {
      const outcome = await api.answerClientTool({
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
      const outcome = await api.decideApproval({ userId, ...decision });
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
    metrics: api.metrics,
  });
  api.metrics.countWebsocketClientsWith(() => gateway.clientCount());
  api.metrics.countSubscriptionsWith(() => gateway.subscriptionCounts());
  return gateway;
}

/** The server's drain (see {@link RunningApi.close}): streams end first, then requests, cut after `graceMs`. */
async function drain(server: http.Server, gateway: Gateway, endStreams: () => void, graceMs: number): Promise<void> {
  const drained = new Promise((resolve) => server.close(resolve));
  server.closeIdleConnections();
  await gateway.close('server shutting down: reconnect and subscribe with after');
  endStreams();
  const cut = setTimeout(() => server.closeAllConnections(), graceMs);
  await drained;
  clearTimeout(cut);
}
