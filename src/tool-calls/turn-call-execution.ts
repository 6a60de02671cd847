import type { Metrics } from '../metrics/metrics';
import type { ToolCallRecord, ToolCallsRepository } from '../store/tool-calls-repository';
import type { TurnsRepository } from '../store/turns-repository';
import { TurnEvents, type EventAppender } from '../event-log/turn-events';
import type { RunningTool, ToolExecutionKind } from './tool-execution-kind';
import { toolResultEvent } from './tool-messages';
import { moveParkedTurnOn, type ParkedTurnResumeDeps } from './parked-turn-resume';

export interface TurnCallExecutionDeps extends ParkedTurnResumeDeps {
  toolCalls: ToolCallsRepository;
  turns: TurnsRepository;
  eventLog: EventAppender;
  metrics: Pick<Metrics, 'toolCalls' | 'toolLabel'>;
  /** Whether a local tool slot's holder (a turn job's lock key) still lives, and how soon a held call is looked at again. */
  localHolds?: { alive(holder: string): Promise<boolean>; recheckMs: number };
}

/**
 * A server-run call of a turn: stored in `tool_calls`, its outcome counted in
 * `switchyard_tool_calls_total` and announced to the conversation as a `tool-result` event.
 * Its Idempotency-Key is `<turnId>:<toolCallId>`. `resumesParkedTurn`: an approved call, run
 * outside its step's flow, whose outcome may be the last one its parked turn waits for (or the
 * last but its clients' answers).
 */
export function turnCallExecution(
  deps: TurnCallExecutionDeps,
  ids: { turnId: string; toolCallId: string },
  options: { resumesParkedTurn?: boolean } = {},
): ToolExecutionKind<ToolCallRecord> {
  return {
    ids,
    async markRunning() {
      const call = await deps.toolCalls.markRunning(ids.turnId, ids.toolCallId);
      if (call) return runningTool(call);
      // Not started: settled, or held by a local slot of the worker that committed the step.
      const held = await deps.toolCalls.holderOf(ids.turnId, ids.toolCallId);
      if (held === null || held.settled) return null;
      const { holder } = held;
      const holds = deps.localHolds ?? { alive: async () => false, recheckMs: 0 };
      if (await holds.alive(holder)) return { heldForMs: holds.recheckMs };
      // Its turn job's lock is gone (the job ended, or its process died): the call is this job's.
      const taken = await deps.toolCalls.takeOver(ids.turnId, ids.toolCallId, holder);
      return taken ? runningTool(taken) : null;
    },
    announceAgain: () => announceAgainIfUnseen(deps, ids),
    settle: (settlement) => deps.toolCalls.settleAttempt(ids.turnId, ids.toolCallId, settlement),
    async announce(settled) {
      deps.metrics.toolCalls.inc({ tool: deps.metrics.toolLabel(settled.name), status: settled.status });
      await announceResult(deps, settled);
      if (options.resumesParkedTurn) await moveParkedTurnOn(deps, { id: settled.turnId, conversationId: settled.conversationId }, settled.step);
    },
  };
}

/** A call just marked running, as the runner reads it. */
export function runningTool(call: ToolCallRecord): RunningTool {
  return {
    toolName: call.name,
    args: call.args,
    attempts: call.attempts,
    toolCallId: call.toolCallId,
    logFields: { conversationId: call.conversationId, step: call.step },
  };
}

/**
 * A redelivered job whose call is already settled: its worker may have died between storing
 * the result and announcing it. While the step's tool phase is still open, announce it again:
 * a client may see a result twice (it keys them by toolCallId), never miss one. A call settled
 * by a local tool slot whose run still lives is that run's to announce: looked at again once
 * the hold would lapse, by when the run has announced it and moved the turn on, or is gone.
 */
async function announceAgainIfUnseen(deps: TurnCallExecutionDeps, ids: { turnId: string; toolCallId: string }): Promise<void | { heldForMs: number }> {
  const [call, turn] = await Promise.all([deps.toolCalls.get(ids.turnId, ids.toolCallId), deps.turns.get(ids.turnId)]);
  if (!call || (call.status !== 'succeeded' && call.status !== 'failed')) return;
  if (turn?.status !== 'waiting_tools' || turn.step !== call.step) return;
  if (deps.localHolds) {
    const held = await deps.toolCalls.holderOf(ids.turnId, ids.toolCallId);
    if (held !== null && (await deps.localHolds.alive(held.holder))) return { heldForMs: deps.localHolds.recheckMs };
  }
  await announceResult(deps, call);
  if (call.approvalId !== null) await moveParkedTurnOn(deps, turn, call.step);
}

async function announceResult(deps: Pick<TurnCallExecutionDeps, 'eventLog'>, settled: ToolCallRecord): Promise<void> {
  const events = new TurnEvents(deps.eventLog, settled.conversationId, settled.turnId);
  events.emit(toolResultEvent(settled));
  await events.flush();
}
