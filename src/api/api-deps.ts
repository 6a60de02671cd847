import type { Logger } from 'pino';
import type { Authenticator } from '../auth/authenticator';
import type { SessionTokens } from '../auth/session-tokens';
import type { WsTickets } from '../auth/ws-tickets';
import type { Metrics } from '../metrics/metrics';
import type { ConversationsRepository } from '../store/conversations-repository';
import type { MessagesRepository } from '../store/messages-repository';
import type { TurnsRepository } from '../store/turns-repository';
import type { ToolInvocationDeps } from '../tool-calls/tool-invocations';
import type { TurnService } from '../turns/turn-service';
import type { OpenAiRouterDeps } from '../openai/routes/openai-router';
import type { AdminRouterDeps } from './admin-router';
import type { ApprovalsRouterDeps } from './approvals-router';
import type { BatchesRouterDeps } from './batches-router';
import type { ChatRouterDeps } from './chat-router';
import type { HealthDeps } from './health-router';
import type { AuthGuard } from './require-user';
import type { ToolsRouterDeps } from './tools-router';
import type { TurnEventStreamer } from './turn-event-stream';
import type { TurnsRouterDeps } from './turns-router';
import type { UiMessageStreamer } from './ui-message-stream';
import type { UserRateLimiter } from './user-rate-limit';
import type { WebhooksRouterDeps } from './webhooks-router';

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
  batchSpoolDir: string;
  /** Webhook endpoints: the repository, the delivery queue (redeliver), the secret box and the address policy. */
  webhooks: WebhooksRouterDeps;
  latestSeq(conversationId: string): Promise<number>;
  checkReady: HealthDeps['checkReady'];
  /** The OpenAI-compatible routes (`/openai/v1`). */
  openAi: OpenAiRouterDeps;
  /** PLAYGROUND_DIR: the playground bundle served at `/`. */
  playgroundDir: string;
}
