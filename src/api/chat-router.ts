import { Router } from 'express';
import { storedToUiMessages, type StoredToolCall } from '@switchyard/protocol';
import { AppError } from '../errors/app-error';
import type { ConversationsRepository } from '../store/conversations-repository';
import type { MessagesRepository } from '../store/messages-repository';
import type { ToolCallRecord, ToolCallsRepository } from '../store/tool-calls-repository';
import { shownStatus, type TurnsRepository } from '../store/turns-repository';
import type { ToolApproval, ToolApprovalsRepository } from '../store/tool-approvals-repository';
import type { DecisionInput, DecisionOutcome } from '../tool-calls/tool-approvals';
import { clientToolResultEvent, toolResultEvent } from '../tool-calls/tool-messages';
import type { TurnService } from '../turns/turn-service';
import { chatRequestSchema, readChatRequest, type ApprovalAnswer, type ChatRequest, type TurnContent } from '../ui-chat/chat-request';
import type { AgentReferences } from '../agents/agent-references';
import type { UiMessageStreamer } from './ui-message-stream';
import { releaseBody } from './body-bytes';
import { principalOf } from './require-user';
import type { TurnsRouterDeps } from './turns-router';
import { parseInput } from './validate';
import { chatParamsSchema } from './request-schemas';
import { uiMessagesSchema } from './contract/browser-contract';
import { sendJson } from './send-json';
import { agentIdOf, assertSessionMayUseAgent } from './session-configuration';
import type { Principal } from '../auth/principal';

/**
 * The chat's conversation, made on its first POST with the body's `agent` (the transport's `body`
 * option, sent with every POST): once the conversation exists, the agent it was made with stays.
 * A session token limited to some agents makes and uses only chats on one of them.
 */
async function chatConversation(deps: ChatRouterDeps, principal: Principal, request: ChatRequest, title: string | undefined) {
  const { userId } = principal;
  const existing = await deps.conversations.findByExternalId(userId, request.id);
  if (existing) {
    assertSessionMayUseAgent(principal, agentIdOf(existing.agent));
    return existing;
  }
  const agent = request.agent === undefined ? undefined : await deps.agentReferences.resolve(userId, request.agent);
  assertSessionMayUseAgent(principal, agent?.agentId ?? null);
  const conversation = await deps.conversations.findOrCreateByExternalId(userId, request.id, { source: 'chat', ...(title ? { title } : {}), ...(agent ? { agent } : {}) });
  assertSessionMayUseAgent(principal, agentIdOf(conversation.agent));
  return conversation;
}

export interface ChatRouterDeps {
  conversations: Pick<ConversationsRepository, 'findOrCreateByExternalId' | 'findByExternalId'>;
  messages: Pick<MessagesRepository, 'list' | 'findByUiMessageId'>;
  turns: Pick<TurnsRepository, 'getForUser' | 'activeTurns' | 'listForConversation'>;
  toolCalls: Pick<ToolCallsRepository, 'listForTurn' | 'listForTurns'>;
  turnService: Pick<TurnService, 'create'>;
  answerClientTool: TurnsRouterDeps['answerClientTool'];
  /** The one decision service (first decision wins), as `POST /v1/turns/:id/approvals` uses it. */
  decideApproval(input: DecisionInput): Promise<DecisionOutcome>;
  toolApprovals: Pick<ToolApprovalsRepository, 'listForTurns'>;
  /** The first POST's `agent`: the user's, not archived. */
  agentReferences: Pick<AgentReferences, 'resolve'>;
  latestSeq(conversationId: string): Promise<number>;
  uiStream: UiMessageStreamer;
}

/**
 * The AI SDK compatible routes (docs/API.md): `POST /api/chat`, `GET /api/chat/:id/stream` and
 * `GET /api/chat/:id/messages`, so that `useChat` works against Switchyard unchanged. The chat id
 * is the conversation's `externalId`; the assistant message id is the turn id.
 */
export function chatRouter(deps: ChatRouterDeps): Router {
  const router = Router();

  router.post('/', async (req, res) => {
    const { userId, keyId } = principalOf(res);
    const request = parseInput(chatRequestSchema, req.body);
    // What the body asks is stored by then: the stream, open for the turn, holds neither the
    // body (a whole chat's history, up to MAX_CHAT_BODY_BYTES) nor its bytes.
    const stream: UiMessageStreamer['stream'] = (input) => {
      releaseBody(req);
      return deps.uiStream.stream(input);
    };
    const ask = readChatRequest(request);
    if (ask.kind === 'message') {
      const title = titleOf(ask.content);
      const conversation = await chatConversation(deps, principalOf(res), request, title);
      const latestSeq = await deps.latestSeq(conversation.id);
      // The UIMessage id is the idempotency key: a resend is the same turn, replayed whole.
      const { turn, created } = await deps.turnService.create(userId, conversation.id, {
        content: ask.content,
        idempotencyKey: `ui-message:${ask.messageId}`,
        uiMessageId: ask.messageId,
        keyId,
        onBusy: 'reject',
        options: {},
      });
      return stream({ turn, keyId, after: created ? latestSeq : undefined, res });
    }
    if (ask.kind === 'regenerate' || ask.kind === 'edit') {
      const conversation = await deps.conversations.findByExternalId(userId, request.id);
      const point = conversation ? await deps.messages.findByUiMessageId(conversation.id, ask.messageId) : null;
      if (!conversation || !point) throw invalidAnswer(`message ${ask.messageId} is not a user message on this chat's path`);
      assertSessionMayUseAgent(principalOf(res), agentIdOf(conversation.agent));
      const latestSeq = await deps.latestSeq(conversation.id);
      const { turn, created } = await deps.turnService.create(userId, conversation.id, {
        ...(ask.kind === 'edit'
          ? // Keyed by the message it replaces: the same edit sent twice at once is one turn.
            { content: ask.content, uiMessageId: ask.messageId, idempotencyKey: `ui-edit:${ask.messageId}:${point.messageId}` }
          : { content: null }),
        branch: { kind: ask.kind, from: point.messageId, field: 'messages' },
        keyId,
        onBusy: 'reject',
        options: {},
      });
      return stream({ turn, keyId, after: created ? latestSeq : undefined, res });
    }

    // Answers go to a turn of a chat that exists: one this user never started is refused, making nothing.
    const conversation = await deps.conversations.findByExternalId(userId, request.id);
    const turn = conversation ? await deps.turns.getForUser(userId, ask.turnId) : null;
    if (!conversation || !turn || turn.conversationId !== conversation.id) {
      throw invalidAnswer(`the last assistant message (${ask.turnId}) is not a turn of this chat`);
    }
    const calls = await deps.toolCalls.listForTurn(turn.id);
    const clientCalls = new Set(calls.filter((call) => call.kind === 'client').map((call) => call.toolCallId));
    const serverCalls = new Set(calls.filter((call) => call.kind !== 'client').map((call) => call.toolCallId));
    const answers = ask.answers.filter((each) => !serverCalls.has(each.toolCallId));
    const unknown = answers.find((each) => !clientCalls.has(each.toolCallId));
    if (unknown) throw invalidAnswer(`toolCallId ${unknown.toolCallId} is not a client tool call of turn ${turn.id}`);
    const approvalIds = new Map(calls.map((call) => [call.toolCallId, call.approvalId]));
    const stranger = ask.approvals.find((each) => approvalIds.get(each.toolCallId) !== each.approvalId);
    if (stranger) throw invalidAnswer(`approval ${stranger.approvalId} is not the approval of a call ${stranger.toolCallId} of turn ${turn.id}`);
    if (answers.length === 0 && ask.approvals.length === 0) throw invalidAnswer('the message answers no client tool call and no approval request');

    // Only what follows the answers is streamed: the client already shows the rest.
    const latestSeq = await deps.latestSeq(conversation.id);
    for (const approval of ask.approvals) await decide(deps, userId, turn.id, approval);
    for (const { toolCallId, answer } of answers) {
      // The first answer wins; a repeat (a resend, a second tab) is acknowledged and ignored.
      await deps.answerClientTool({ userId, turnId: turn.id, toolCallId, answer });
    }
    const current = (await deps.turns.getForUser(userId, turn.id)) ?? turn;
    // The step the answers belong to, as the turn stood before them: it may have gone on since.
    return stream({ turn: current, keyId, after: latestSeq, step: turn.step, res });
  });

  router.get('/:id/stream', async (req, res) => {
    const { userId, keyId } = principalOf(res);
    const { id } = parseInput(chatParamsSchema, req.params);
    const conversation = await deps.conversations.findByExternalId(userId, id);
    const [active] = conversation ? await deps.turns.activeTurns(conversation.id) : [];
    if (!active) return void res.status(204).end();
    return deps.uiStream.stream({ turn: active, keyId, after: undefined, res });
  });

  // The chat's stored history as the UIMessages to start useChat with. A chat id never used is
  // a new chat: nothing to show yet (externalIds are per user, so this tells nothing of others).
  router.get('/:id/messages', async (req, res) => {
    const { userId } = principalOf(res);
    const { id } = parseInput(chatParamsSchema, req.params);
    const conversation = await deps.conversations.findByExternalId(userId, id);
    if (!conversation) return sendJson(res, uiMessagesSchema, []);
    const [messages, allTurns] = await Promise.all([deps.messages.list(conversation.id), deps.turns.listForConversation(conversation.id)]);
    // The chat is its path: turns an edit or a regenerate replaced are not on it.
    const turns = allTurns.filter((turn) => turn.supersededBy === null);
    const turnIds = turns.map((turn) => turn.id);
    const [toolCalls, approvals] = await Promise.all([deps.toolCalls.listForTurns(turnIds), deps.toolApprovals.listForTurns(turnIds)]);
    const approvalOf = new Map(approvals.map((approval) => [approval.approvalId, approval]));
    sendJson(
      res,
      uiMessagesSchema,
      storedToUiMessages({
        messages,
        turns: turns.map((turn) => ({ ...turn, status: shownStatus(turn) })),
        toolCalls: toolCalls.map((call) => storedToolCall(call, call.approvalId === null ? undefined : approvalOf.get(call.approvalId))),
      }),
    );
  });

  return router;
}

/** A new chat's conversation is titled with the start of its first message, as chat apps list them. */
function titleOf(content: TurnContent): string | undefined {
  const text = typeof content === 'string' ? content : content.map((part) => (part.type === 'text' ? part.text : '')).join(' ');
  const line = text.trim().split('\n')[0] ?? '';
  if (!line) return undefined;
  return line.length > 80 ? `${line.slice(0, 79)}…` : line;
}

/**
 * A person's decision from an `approval-responded` part, through the same service as the REST
 * route. A call decided already (a resend, another tab or device) keeps its first decision, and
 * one whose turn ended meanwhile no longer waits: either way the stream that follows shows how
 * the turn stands. Only a call that needs no approval is refused.
 */
async function decide(deps: Pick<ChatRouterDeps, 'decideApproval'>, userId: string, turnId: string, approval: ApprovalAnswer): Promise<void> {
  const { toolCallId, approved, reason } = approval;
  const outcome = await deps.decideApproval({ userId, turnId, toolCallId, approved, ...(reason !== undefined ? { reason } : {}) });
  if (outcome.kind === 'not_found' || outcome.kind === 'not_gated') throw invalidAnswer(`toolCallId ${toolCallId} awaits no approval in turn ${turnId}`);
}

/** A call with the attempts and time its `tool-result` event reports (a client call's: from the request to the answer), and its approval. */
function storedToolCall(call: ToolCallRecord, approval: ToolApproval | undefined): StoredToolCall {
  const runsOnClient = call.kind === 'client';
  // A call refused before it ran was announced with neither attempt nor time, whatever its kind.
  const { attempts, durationMs } = runsOnClient && call.args !== null ? clientToolResultEvent(call) : toolResultEvent(call);
  const decision = approval?.decision ? { approved: approval.decision.approved, reason: approval.decision.reason } : null;
  return { ...call, runsOnClient, attempts, durationMs, ...(approval ? { approval: { id: approval.approvalId, decision } } : {}) };
}

function invalidAnswer(message: string): AppError {
  return new AppError('invalid_request', `invalid request: ${message}`, [{ field: 'messages', message }]);
}
