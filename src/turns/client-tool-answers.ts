import type { ConversationsRepository } from '../store/conversations-repository';
import type { Db } from '../store/db';
import { SETTLED_TOOL_CALL_STATUSES, type ToolCallsRepository } from '../store/tool-calls-repository';
import type { TurnsRepository } from '../store/turns-repository';
import { toolResultEvent } from './tool-messages';
import { TurnEvents, type EventAppender } from './turn-events';

export interface ClientToolAnswerDeps {
  db: Db;
  conversations: ConversationsRepository;
  turns: TurnsRepository;
  toolCalls: ToolCallsRepository;
  eventLog: EventAppender;
  /** `traceparent`: the turn's trace, which the resumed job joins. */
  enqueueResume(turnId: string, step: number, traceparent?: string | null): Promise<void>;
}

export type ClientAnswer = { result: unknown } | { error: { code: string; message: string } };

export type AnswerOutcome =
  | { kind: 'accepted' }
  /** The call had an answer already: the first one wins, this one is acknowledged and ignored. */
  | { kind: 'ignored' }
  | { kind: 'not_found' }
  | { kind: 'not_client_tool' };

/**
 * Stores a client tool's answer (from the websocket, the HTTP route, or the timeout job),
 * announces it, and resumes the turn when it was the last answer the turn waited for.
 * `userId` scopes the call to its owner; the timeout job passes null.
 */
export async function answerClientToolCall(
  deps: ClientToolAnswerDeps,
  input: { userId: string | null; turnId: string; toolCallId: string; answer: ClientAnswer; attempts?: number },
): Promise<AnswerOutcome> {
  const turn = await deps.turns.get(input.turnId);
  if (!turn || (input.userId !== null && turn.userId !== input.userId)) return { kind: 'not_found' };
  const call = await deps.toolCalls.get(input.turnId, input.toolCallId);
  if (!call) return { kind: 'not_found' };
  if (call.kind !== 'client') return { kind: 'not_client_tool' };

  const settled = await deps.toolCalls.settle(
    input.turnId,
    input.toolCallId,
    'error' in input.answer ? { status: 'failed', error: input.answer.error } : { status: 'succeeded', result: input.answer.result },
  );
  if (!settled) return { kind: 'ignored' };
  const events = new TurnEvents(deps.eventLog, turn.conversationId, turn.id);
  events.emit(toolResultEvent(settled, { attempts: input.attempts ?? 1, durationMs: Math.max(0, Date.now() - Date.parse(settled.createdAt)) }));
  await events.flush();

  // Under the conversation's lock, against the runner parking the turn at the same moment.
  const resume = await deps.db.transaction(async (tx) => {
    await deps.conversations.lock(turn.conversationId, tx);
    const current = await deps.turns.get(turn.id, tx);
    if (current?.status !== 'waiting_tools' || current.awaiting !== 'clients') return false;
    const calls = await deps.toolCalls.listForStep(turn.id, settled.step, tx);
    return calls.every((each) => SETTLED_TOOL_CALL_STATUSES.includes(each.status));
  });
  if (resume) await deps.enqueueResume(turn.id, settled.step, turn.traceparent);
  return { kind: 'accepted' };
}

