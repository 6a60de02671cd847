import type { ConversationsRepository } from '../store/conversations-repository';
import type { Db } from '../store/db';
import { SETTLED_TOOL_CALL_STATUSES, type ToolCallRecord, type ToolCallsRepository } from '../store/tool-calls-repository';
import type { Turn, TurnsRepository } from '../store/turns-repository';
import { TurnEvents, type EventAppender } from '../event-log/turn-events';

export interface ParkedTurnResumeDeps {
  db: Db;
  conversations: ConversationsRepository;
  turns: TurnsRepository;
  toolCalls: ToolCallsRepository;
  /** `traceparent`: the turn's trace, which the resumed job joins. */
  enqueueResume(turnId: string, step: number, traceparent?: string | null): Promise<void>;
}

const isSettled = (call: ToolCallRecord) => SETTLED_TOOL_CALL_STATUSES.includes(call.status);

/**
 * Resumes a turn parked on `step` (for client answers or approvals, not for its flow's tool
 * jobs) once every call of that step is settled; called by whatever just settled one of them
 * (a client's answer, a denial, an approved call's run, a timeout). Called again after a crash,
 * it resumes once: the resume's job id is the same.
 */
export async function resumeParkedTurnWhenSettled(deps: ParkedTurnResumeDeps, turn: Pick<Turn, 'id' | 'conversationId'>, step: number): Promise<void> {
  const waiting = await stepStillParked(deps, turn, step, false);
  if (waiting.parked && waiting.calls.every(isSettled)) await deps.enqueueResume(turn.id, step, waiting.traceparent);
}

/**
 * After a decision, or an approved call's run: resumes the turn when its step is settled, or,
 * when all it still waits on is its clients' answers (no call waits for a person and every
 * server-run call has settled), parks it for them and announces `turn-waiting` again. The
 * approved client calls were asked after the turn's first `turn-waiting`, and a reader that
 * stops at a wait (the /api/chat stream, which the browser must end before it can answer)
 * learns only from this one that the turn now waits on it.
 */
export async function moveParkedTurnOn(deps: ParkedTurnResumeDeps & { eventLog: EventAppender }, turn: Pick<Turn, 'id' | 'conversationId'>, step: number): Promise<void> {
  const waiting = await stepStillParked(deps, turn, step, true);
  if (!waiting.parked) return;
  if (waiting.calls.every(isSettled)) return deps.enqueueResume(turn.id, step, waiting.traceparent);
  if (!waiting.onClientsOnly) return;
  const events = new TurnEvents(deps.eventLog, turn.conversationId, turn.id);
  events.emit({ type: 'turn-waiting', toolCallIds: waiting.calls.filter((call) => !isSettled(call)).map((call) => call.toolCallId) });
  await events.flush();
}

/** Some call is unsettled, and every unsettled one is a client call asked of its clients. */
const waitsOnClientsOnly = (calls: ToolCallRecord[]) => {
  const unsettled = calls.filter((call) => !isSettled(call));
  return unsettled.length > 0 && unsettled.every((call) => call.kind === 'client' && call.status !== 'awaiting_approval');
};

/**
 * Whether the turn is parked on `step`, and that step's calls. Under the conversation's lock,
 * against the runner parking the turn at the same moment (tool-phase.ts): either the runner
 * sees the settled call, or this sees the turn parked. `parkForClients`: a turn left waiting on
 * its clients only is parked for them (shown `waiting_tools`, no longer `waiting_approval`).
 */
async function stepStillParked(
  deps: ParkedTurnResumeDeps,
  turn: Pick<Turn, 'id' | 'conversationId'>,
  step: number,
  parkForClients: boolean,
): Promise<{ parked: false } | { parked: true; calls: ToolCallRecord[]; traceparent: string | null; onClientsOnly: boolean }> {
  return deps.db.transaction(async (tx) => {
    await deps.conversations.lock(turn.conversationId, tx);
    const current = await deps.turns.get(turn.id, tx);
    if (current?.status !== 'waiting_tools' || current.awaiting === 'tools' || current.awaiting === null || current.step !== step) return { parked: false };
    const calls = await deps.toolCalls.listForStep(turn.id, step, tx);
    const onClientsOnly = parkForClients && waitsOnClientsOnly(calls) && (await deps.turns.setWaiting(turn.id, current.attempt, 'clients', tx));
    return { parked: true, calls, traceparent: current.traceparent, onClientsOnly };
  });
}
