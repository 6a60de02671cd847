import type { ConversationsRepository } from '../store/conversations-repository';
import type { Db } from '../store/db';
import { SETTLED_TOOL_CALL_STATUSES, type ToolCallRecord, type ToolCallsRepository } from '../store/tool-calls-repository';
import type { Turn, TurnsRepository } from '../store/turns-repository';

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
  const waiting = await stepStillParked(deps, turn, step);
  if (waiting.parked && waiting.calls.every(isSettled)) await deps.enqueueResume(turn.id, step, waiting.traceparent);
}

/**
 * Whether the turn is parked on `step`, and that step's calls. Under the conversation's lock,
 * against the runner parking the turn at the same moment (tool-phase.ts): either the runner
 * sees the settled call, or this sees the turn parked.
 */
async function stepStillParked(
  deps: ParkedTurnResumeDeps,
  turn: Pick<Turn, 'id' | 'conversationId'>,
  step: number,
): Promise<{ parked: false } | { parked: true; calls: ToolCallRecord[]; traceparent: string | null }> {
  return deps.db.transaction(async (tx) => {
    await deps.conversations.lock(turn.conversationId, tx);
    const current = await deps.turns.get(turn.id, tx);
    if (current?.status !== 'waiting_tools' || current.awaiting === 'tools' || current.awaiting === null || current.step !== step) return { parked: false };
    return { parked: true, calls: await deps.toolCalls.listForStep(turn.id, step, tx), traceparent: current.traceparent };
  });
}
