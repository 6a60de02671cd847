import { clientToolResultEvent } from './tool-messages';
import { TurnEvents, type EventAppender } from '../event-log/turn-events';
import { resumeParkedTurnWhenSettled, type ParkedTurnResumeDeps } from './parked-turn-resume';

export interface ClientToolAnswerDeps extends ParkedTurnResumeDeps {
  eventLog: EventAppender;
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
  // Not asked of any client yet: a person decides first.
  if (call.status === 'awaiting_approval') return { kind: 'ignored' };

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

  await resumeParkedTurnWhenSettled(deps, turn, call.step);
  return settled ? { kind: 'accepted' } : { kind: 'ignored' };
}
