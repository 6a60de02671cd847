import { Router } from 'express';
import type { z } from 'zod';
import { clientToolAnswerAckSchema, clientToolAnswerSchema, turnDetailSchema, turnSchema } from '@switchyard/protocol';
import { AppError, notFound } from '../errors/app-error';
import { formatMessageId } from '../store/message-id';
import type { MessagesRepository } from '../store/messages-repository';
import { durationMs, type ToolCallsRepository } from '../store/tool-calls-repository';
import type { AnswerOutcome, ClientAnswer } from '../tool-calls/client-tool-answers';
import type { ProviderCall, ProviderCallsRepository } from '../store/provider-calls-repository';
import type { InflightSnapshot } from '../event-log/inflight-state';
import { isTerminal, shownStatus, type Turn, type TurnsRepository } from '../store/turns-repository';
import type { TurnService } from '../turns/turn-service';
import { principalOf, userIdOf } from './require-user';
import type { TurnEventStreamer } from './turn-event-stream';
import { parseInput, parseRouteId } from './validate';
import { sendJson } from './send-json';
import { turnIdOfChatCompletion } from '../openai/chat-completion-id';
import type { UsageFigures, UsageLedgerRepository } from '../usage/store/usage-ledger-repository';

export interface TurnsRouterDeps {
  turns: TurnsRepository;
  toolCalls: ToolCallsRepository;
  messages: Pick<MessagesRepository, 'findIncomplete'>;
  turnService: TurnService;
  eventStream: TurnEventStreamer;
  answerClientTool(input: { userId: string; turnId: string; toolCallId: string; answer: ClientAnswer }): Promise<AnswerOutcome>;
  /** The running step's partial tool calls; null when unknown (none, or Redis is unreachable). */
  inflight(turn: { id: string; conversationId: string }): Promise<InflightSnapshot | null>;
  providerCalls: Pick<ProviderCallsRepository, 'listForTurn'>;
  /** A turn's usage: the ledger's sum for it (docs/API.md, "Usage and budgets"). */
  ledger: Pick<UsageLedgerRepository, 'forTurn'>;
}

export function turnsRouter(deps: TurnsRouterDeps): Router {
  const router = Router();

  router.get('/:id', async (req, res) => {
    const id = parseRouteId(req.params.id, 'turn');
    // A chat completion's id names its turn (docs/API.md, "OpenAI-compatible routes").
    const turn = await deps.turns.getForUser(userIdOf(res), turnIdOfChatCompletion(id) ?? id);
    if (!turn) throw notFound('turn');
    // A finished turn has no calls in flight: its view comes from PostgreSQL alone. Only a
    // cancel (or an interrupt) leaves an incomplete message.
    const [toolCalls, inflight, incomplete, providerCalls, usage] = await Promise.all([
      deps.toolCalls.listForTurn(turn.id),
      isTerminal(turn.status) ? null : deps.inflight(turn),
      turn.status === 'cancelled' ? deps.messages.findIncomplete(turn.id) : null,
      deps.providerCalls.listForTurn(turn.id),
      deps.ledger.forTurn(turn.id),
    ]);
    sendJson(res, turnDetailSchema, {
      ...turnView(turn),
      usage: turnUsage(usage),
      toolCalls: toolCalls.map((call) => ({
        toolCallId: call.toolCallId,
        step: call.step,
        toolName: call.name,
        kind: call.kind,
        args: call.args,
        argumentsText: call.argumentsText,
        status: call.status,
        attempts: call.attempts,
        ...(call.status === 'succeeded' ? { result: call.result } : {}),
        ...(call.error ? { error: call.error } : {}),
        durationMs: durationMs(call),
      })),
      providerCalls: providerCalls.map(({ turnId: _turnId, ledger, ...call }) => ({ ...call, costUsd: ledger.costUsd, estimated: ledger.estimated })),
      partialToolCalls: inflight && inflight.step === turn.step + 1 ? inflight.toolCalls : [],
      incompleteMessage: incomplete && {
        id: incomplete.id,
        step: incomplete.step,
        content: typeof incomplete.content === 'string' ? incomplete.content : null,
        reasoning: incomplete.reasoning ?? null,
      },
    });
  });

  router.post('/:id/tool-results', async (req, res) => {
    const turnId = parseRouteId(req.params.id, 'turn');
    const body = parseInput(clientToolAnswerSchema, req.body);
    const answer = 'error' in body ? { error: body.error } : { result: body.result };
    const outcome = await deps.answerClientTool({ userId: userIdOf(res), turnId, toolCallId: body.toolCallId, answer });
    switch (outcome.kind) {
      case 'not_found':
        throw notFound('tool call');
      case 'not_client_tool':
        throw new AppError('invalid_request', 'this call is not a client tool call', [{ field: 'toolCallId', message: 'not a client tool call' }]);
      case 'accepted':
      case 'ignored':
        sendJson(res, clientToolAnswerAckSchema, { accepted: outcome.kind === 'accepted', ...(outcome.kind === 'ignored' ? { reason: 'already_answered' as const } : {}) });
    }
  });

  router.post('/:id/cancel', async (req, res) => {
    const turn = await deps.turnService.cancel(userIdOf(res), parseRouteId(req.params.id, 'turn'));
    sendJson(res, turnSchema, turnView(turn));
  });

  router.get('/:id/events', async (req, res) => {
    const { userId, keyId } = principalOf(res);
    const turn = await deps.turns.getForUser(userId, parseRouteId(req.params.id, 'turn'));
    if (!turn) throw notFound('turn');
    await deps.eventStream.stream(turn, keyId, req, res);
  });

  return router;
}

export function turnView(turn: Turn): z.output<typeof turnSchema> {
  return {
    id: turn.id,
    conversationId: turn.conversationId,
    status: shownStatus(turn),
    attempt: turn.attempt,
    // Why a turn shows `queued` again: provider failures retried so far, and the latest.
    providerRetries: turn.providerRetries,
    lastError: turn.lastError,
    step: turn.step,
    steps: turn.steps,
    finishReason: turn.finishReason,
    error: turn.error,
    usage: turn.usage,
    options: turn.options,
    agentId: turn.agentId,
    agentVersion: turn.agentVersion,
    // A regenerate or an edit, by the message's public id.
    branch: turn.branch && { kind: turn.branch.kind, fromMessageId: formatMessageId(turn.branch.fromMessageId) },
    supersededBy: turn.supersededBy,
    timings: { createdAt: turn.createdAt, startedAt: turn.startedAt, finishedAt: turn.finishedAt },
    ...(turn.output !== undefined ? { output: turn.output } : {}),
  };
}

/** The ledger's figures as a turn's `usage` shows them (the count of calls is `providerCalls`). */
function turnUsage({ calls: _calls, ...figures }: UsageFigures) {
  return figures;
}
