import type { ConversationsRepository } from '../store/conversations-repository';
import type { Db } from '../store/db';
import { SETTLED_TOOL_CALL_STATUSES, type ToolCallRecord, type ToolCallsRepository } from '../store/tool-calls-repository';
import type { Turn, TurnsRepository } from '../store/turns-repository';
import { clientToolResultEvent } from './tool-messages';
import { TurnEvents, type EventAppender } from '../event-log/turn-events';

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
 * Stores a client tool's answer (from the websocket, the HTTP route, or the timeout job):
 * 1. store it, unless the call has its answer already (the first one wins);
 * 2. announce it (a repeated answer announces nothing: two clients racing to answer show one
 *    result; a run that takes the turn over announces again what may have been lost);
 * 3. resume the turn when it waits on clients and every call of its step is settled. A repeated
 *    answer does this too: the process that stored the last answer may have died before
 *    resuming the turn, and a waiting turn whose calls are all settled must go on (the resume's
 *    job id is the same, so two answers resuming at once resume it once).
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

  const attempts = input.attempts ?? 1;
  const settled = await deps.toolCalls.settle(
    input.turnId,
    input.toolCallId,
    'error' in input.answer ? { status: 'failed', error: input.answer.error, attempts } : { status: 'succeeded', result: input.answer.result, attempts },
  );
  if (settled) {
    const events = new TurnEvents(deps.eventLog, turn.conversationId, turn.id);
    events.emit(clientToolResultEvent(settled));
    await events.flush();
  }

  const step = await stepStillWaiting(deps, turn, call.step);
  if (step.waiting && step.calls.every(isSettled)) await deps.enqueueResume(turn.id, call.step, turn.traceparent);
  return settled ? { kind: 'accepted' } : { kind: 'ignored' };
}

const isSettled = (call: ToolCallRecord) => SETTLED_TOOL_CALL_STATUSES.includes(call.status);

/**
 * Whether the turn is parked for client answers on `step`, and that step's calls. Under the
 * conversation's lock, against the runner parking the turn at the same moment (tool-phase.ts):
 * either the runner sees the answer, or this sees the turn parked.
 */
async function stepStillWaiting(deps: ClientToolAnswerDeps, turn: Turn, step: number): Promise<{ waiting: false } | { waiting: true; calls: ToolCallRecord[] }> {
  return deps.db.transaction(async (tx) => {
    await deps.conversations.lock(turn.conversationId, tx);
    const current = await deps.turns.get(turn.id, tx);
    if (current?.status !== 'waiting_tools' || current.awaiting !== 'clients' || current.step !== step) return { waiting: false };
    return { waiting: true, calls: await deps.toolCalls.listForStep(turn.id, step, tx) };
  });
}
