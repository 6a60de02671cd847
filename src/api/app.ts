import { approvalsRouter, type ApprovalsRouterDeps } from './approvals-router';
import express, { type Express, type RequestHandler } from 'express';
import type { Logger } from 'pino';
import { wsTicketSchema } from '@switchyard/protocol';
import type { Authenticator } from '../auth/authenticator';
import type { SessionTokens } from '../auth/session-tokens';
import type { WsTickets } from '../auth/ws-tickets';
import type { Metrics } from '../metrics/metrics';
import type { ConversationsRepository } from '../store/conversations-repository';
import type { MessagesRepository } from '../store/messages-repository';
import type { TurnsRepository } from '../store/turns-repository';
import type { TurnService } from '../turns/turn-service';
import { adminRouter, type AdminRouterDeps } from './admin-router';
import { conversationsRouter } from './conversations-router';
import { errorHandler, notFoundHandler } from './error-handler';
import { healthRouter, type HealthDeps } from './health-router';
import { principalOf, requireUser, type AuthGuard } from './require-user';
import { holdBodyBytes } from './body-bytes';
import { readJsonBody } from './json-body';
import { requireAdmin } from './require-admin';
import { limitUserRate, type UserRateLimiter } from './user-rate-limit';
import type { TurnEventStreamer } from './turn-event-stream';
import { toolsRouter, type ToolsRouterDeps } from './tools-router';
import { turnsRouter, type TurnsRouterDeps } from './turns-router';
import type { ToolInvocationDeps } from '../tool-calls/tool-invocations';
import { sessionTokenSchema } from './request-schemas';
import { parseInput } from './validate';
import { crossOrigin } from './cross-origin';
import type { UiMessageStreamer } from './ui-message-stream';
import { chatRouter, type ChatRouterDeps } from './chat-router';
import { batchesRouter, type BatchesRouterDeps } from './batches-router';
import type { SubmissionSlots } from './submission-slots';
import { webhooksRouter, type WebhooksRouterDeps } from './webhooks-router';
import { servePlayground } from './playground-route';
import { serveOpenApiDocument } from './openapi-route';
import { sessionTokenGrantSchema } from './contract/browser-contract';
import { sendJson } from './send-json';
import { openAiRouter, type OpenAiRouterDeps } from './openai-router';
import { openAiErrorHandler, openAiNotFound } from './openai-error-handler';
import { modelsRouter, type ModelsRouterDeps } from './models-router';

export interface ApiDeps {
  logger: Logger;
  metrics: Metrics;
  maxBodyBytes: number;
  /** MAX_CHAT_BODY_BYTES: `/api/chat` bodies carry the whole UI history. */
  maxChatBodyBytes: number;
  adminToken: string | undefined;
  authenticator: Authenticator;
  /** Bad credentials per client address (AUTH_FAILURES_PER_MINUTE, TRUST_PROXY). */
  authGuard: AuthGuard;
  rateLimiter: UserRateLimiter;
  tickets: WsTickets;
  /** ALLOWED_ORIGINS: the browser origins that may call the routes meant for browsers. */
  allowedOrigins: readonly string[];
  sessionTokens: SessionTokens;
  /** Default lifetime of a session token. */
  sessionTokenTtlSeconds: number;
  users: AdminRouterDeps['users'];
  conversations: ConversationsRepository;
  messages: MessagesRepository;
  turns: TurnsRepository;
  toolCalls: TurnsRouterDeps['toolCalls'];
  tools: ToolsRouterDeps['tools'];
  userAllowedTools: ToolsRouterDeps['userAllowedTools'];
  toolInvocations: ToolInvocationDeps;
  answerClientTool: TurnsRouterDeps['answerClientTool'];
  decideApproval: ApprovalsRouterDeps['decideApproval'];
  toolApprovals: ApprovalsRouterDeps['toolApprovals'] & ChatRouterDeps['toolApprovals'];
  inflight: TurnsRouterDeps['inflight'];
  turnService: TurnService;
  eventStream: TurnEventStreamer;
  uiStream: UiMessageStreamer;
  batches: BatchesRouterDeps['batches'];
  openAiBatches: BatchesRouterDeps['openAiBatches'];
  startBatch: BatchesRouterDeps['startBatch'];
  batchRunner: BatchesRouterDeps['runner'];
  followBatch: BatchesRouterDeps['followBatch'];
  batchStreams: BatchesRouterDeps['streams'];
  maxBatchBytes: number;
  maxBatchJsonBytes: number;
  maxBatchItems: number;
  batchSubmissionSlots: BatchesRouterDeps['submissionSlots'];
  /**
   * MAX_TURN_BODY_BYTES_IN_FLIGHT: the bytes of the bodies of requests that stay open for their
   * turn (`POST /api/chat` here, `POST /openai/v1/responses`) this process reads at once.
   */
  turnBodyBytes: SubmissionSlots;
  batchSpoolDir: string;
  /** Webhook endpoints: the repository, the delivery queue (redeliver), the secret box and the address policy. */
  webhooks: WebhooksRouterDeps;
  latestSeq(conversationId: string): Promise<number>;
  checkReady: HealthDeps['checkReady'];
  /** The OpenAI-compatible routes (`/openai/v1`). */
  openAi: OpenAiRouterDeps;
  /** PLAYGROUND_DIR: the playground bundle served at `/`. */
  playgroundDir: string;
  models: ModelsRouterDeps;
  providerCalls: TurnsRouterDeps['providerCalls'];
}

/** The HTTP API as an express app; the caller owns the server (and the websocket gateway on it). */
export function createApiApp(deps: ApiDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use(countRequests(deps.metrics));
  app.use(healthRouter({ checkReady: deps.checkReady, registry: deps.metrics.registry }));
  app.use(servePlayground(deps.playgroundDir));
  app.get('/openapi.json', serveOpenApiDocument());
  // Before every credentials check: a browser's preflight carries none.
  app.use(['/v1', '/api'], crossOrigin({ allowedOrigins: deps.allowedOrigins, logger: deps.logger }));
  // Before the API's body parsers: a batch may be JSONL, and larger than MAX_BODY_BYTES.
  app.use(
    '/v1/batches',
    requireUser(deps.authenticator, deps.authGuard),
    limitUserRate(deps.rateLimiter),
    batchesRouter({
      batches: deps.batches,
      openAiBatches: deps.openAiBatches,
      startBatch: deps.startBatch,
      runner: deps.batchRunner,
      followBatch: deps.followBatch,
      streams: deps.batchStreams,
      usableTools: { tools: deps.tools, userAllowedTools: deps.userAllowedTools },
      maxBatchBytes: deps.maxBatchBytes,
      maxBatchJsonBytes: deps.maxBatchJsonBytes,
      maxBatchItems: deps.maxBatchItems,
      submissionSlots: deps.batchSubmissionSlots,
      spoolDir: deps.batchSpoolDir,
    }),
  );
  // OpenAI's SDKs answer to OpenAI's error shape: these routes have their own 404 and error handler.
  app.use(
    '/openai/v1',
    requireUser(deps.authenticator, deps.authGuard),
    limitUserRate(deps.rateLimiter),
    openAiRouter(deps.openAi),
    openAiNotFound,
    openAiErrorHandler(deps.logger),
  );
  // Credentials and rate limits come before any body is read: a refused request's body is never
  // waited for (the error handler closes its connection), and costs no parsing.
  app.use('/v1/admin', requireAdmin(deps.adminToken, deps.authGuard), readJsonBody(deps.maxBodyBytes), adminRouter({ users: deps.users, tools: deps.tools }));
  app.use(['/v1', '/api'], requireUser(deps.authenticator, deps.authGuard), limitUserRate(deps.rateLimiter));
  app.use('/v1', readJsonBody(deps.maxBodyBytes));
  // Only its POST has a body: the rest of /api/chat takes nothing from the budget.
  app.use('/api/chat', holdBodyBytes(deps.turnBodyBytes, deps.maxChatBodyBytes), readJsonBody(deps.maxChatBodyBytes));
  app.post('/v1/ws-tickets', async (_req, res) => {
    sendJson(res, wsTicketSchema, await deps.tickets.issue(principalOf(res)), 201);
  });
  app.post('/v1/session-tokens', async (req, res) => {
    const { ttlSeconds } = parseInput(sessionTokenSchema, req.body);
    sendJson(res, sessionTokenGrantSchema, await deps.sessionTokens.mint(principalOf(res), ttlSeconds ?? deps.sessionTokenTtlSeconds), 201);
  });
  app.use(
    '/v1/conversations',
    conversationsRouter({
      conversations: deps.conversations,
      messages: deps.messages,
      turnService: deps.turnService,
      usableTools: { tools: deps.tools, userAllowedTools: deps.userAllowedTools },
      latestSeq: deps.latestSeq,
    }),
  );
  app.use(
    '/v1/turns',
    turnsRouter({
      turns: deps.turns,
      toolCalls: deps.toolCalls,
      messages: deps.messages,
      turnService: deps.turnService,
      eventStream: deps.eventStream,
      answerClientTool: deps.answerClientTool,
      inflight: deps.inflight,
      providerCalls: deps.providerCalls,
    }),
  );
  app.use(
    '/api/chat',
    chatRouter({
      conversations: deps.conversations,
      messages: deps.messages,
      turns: deps.turns,
      toolCalls: deps.toolCalls,
      turnService: deps.turnService,
      answerClientTool: deps.answerClientTool,
      decideApproval: deps.decideApproval,
      toolApprovals: deps.toolApprovals,
      latestSeq: deps.latestSeq,
      uiStream: deps.uiStream,
    }),
  );
  app.use('/v1', approvalsRouter({ toolApprovals: deps.toolApprovals, decideApproval: deps.decideApproval }));
  app.use('/v1/webhooks', webhooksRouter(deps.webhooks));
  app.use('/v1/models', modelsRouter(deps.models));
  app.use('/v1/tools', toolsRouter({ tools: deps.tools, userAllowedTools: deps.userAllowedTools, ...deps.toolInvocations }));
  app.use(notFoundHandler);
  app.use(errorHandler(deps.logger));
  return app;
}

function countRequests(metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    res.on('finish', () => {
      const route = req.route?.path ? `${req.baseUrl}${String(req.route.path)}` : 'unmatched';
      metrics.httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  };
}
