import type { Tracer } from '@opentelemetry/api';
import type { Queue } from 'bullmq';
import type { Metrics } from '../metrics/metrics';
import { recordApprovalDecision } from '../tracing/approval-span';
import { enqueueApprovedCall } from '../queue/tool-queue';
import { requestClientTool } from './client-tool-request';
import type { ToolApproval, ToolApprovalsRepository } from '../store/tool-approvals-repository';
import { SETTLED_TOOL_CALL_STATUSES, type ToolCallRecord } from '../store/tool-calls-repository';
import type { ToolRegistry } from '../tools/tool';
import { TurnEvents, type EventAppender } from '../event-log/turn-events';
import { moveParkedTurnOn, type ParkedTurnResumeDeps } from './parked-turn-resume';
import { toolResultEvent } from './tool-messages';

export interface ApprovalDecisionDeps extends ParkedTurnResumeDeps {
  toolApprovals: ToolApprovalsRepository;
  tools: Pick<ToolRegistry, 'checkArguments' | 'get'>;
  toolQueue: Queue;
  eventLog: EventAppender;
  metrics: Pick<Metrics, 'approvalDecisionTime'>;
  tracer: Tracer;
  now?: () => Date;
}

export interface DecisionInput {
  /** The deciding user (the turn's owner); null for the timeout job. */
  userId: string | null;
  turnId: string;
  toolCallId: string;
  approved: boolean;
  reason?: string;
  /** Replaces the model's arguments; checked against the tool's schema. */
  args?: Record<string, unknown>;
}

/** The decision as the route and the websocket answer it. */
export interface StoredDecision {
  toolCallId: string;
  approved: boolean;
  reason: string | null;
  args: unknown;
  decidedAt: string;
}

export type DecisionOutcome =
  | { kind: 'decided'; decision: StoredDecision }
  /** The same decision came before: the stored one. */
  | { kind: 'repeated'; decision: StoredDecision }
  | { kind: 'already_decided'; decision: StoredDecision }
  | { kind: 'not_found' }
  | { kind: 'not_gated' }
  /** The call no longer waits (its turn was cancelled or ended). */
  | { kind: 'not_waiting' }
  | { kind: 'invalid_arguments'; message: string };

const TIMEOUT_REASON = 'no decision before the approval expired';

/**
 * A person's decision on a call that waits for approval (from the REST route, the websocket
 * frame, and later /api/chat), or its expiry (the timeout job, `userId` null):
 * 1. Check: the turn is the user's, the call exists and needs approval, edited `args` fit the
 *    tool's schema. Nothing is stored when any check fails.
 * 2. Under the approval's row lock, in one transaction: the first decision is stored with the
 *    call's move on (approved: pending again, with the arguments it runs with; denied: settled
 *    with `denied`, the model's result). A decision already stored answers as it is: the same
 *    one again is a repeat, the opposite one `already_decided`. Past `expiresAt` the expiry is
 *    stored instead (as the timeout job would).
 * 3. Announce the decision (and a denial's `tool-result`), committed first as everywhere.
 * 4. Move the turn on: an approved call goes to a tool job (a client tool to its clients); a
 *    denied one may be the step's last unsettled call, which resumes the parked turn; a turn
 *    left waiting on its clients only announces `turn-waiting` again. A repeat
 *    does this again: the process that stored the decision may have died before it (the job ids
 *    are the same, so nothing runs twice).
 */
export async function decideApproval(deps: ApprovalDecisionDeps, input: DecisionInput): Promise<DecisionOutcome> {
  const turn = await deps.turns.get(input.turnId);
  if (!turn || (input.userId !== null && turn.userId !== input.userId)) return { kind: 'not_found' };
  const call = await deps.toolCalls.get(input.turnId, input.toolCallId);
  if (!call) return { kind: 'not_found' };
  if (call.approvalId === null) return { kind: 'not_gated' };
  let editedArgs: unknown = null;
  if (input.approved && input.args !== undefined) {
    const checked = deps.tools.checkArguments(call.name, JSON.stringify(input.args));
    if (!checked.ok) return { kind: 'invalid_arguments', message: checked.error.message };
    editedArgs = checked.args;
  }

  const now = deps.now?.() ?? new Date();
  const stored = await deps.db.transaction(async (tx) => {
    const approval = await deps.toolApprovals.lock(input.turnId, input.toolCallId, tx);
    if (!approval) return { kind: 'not_found' as const };
    if (approval.decision) return { kind: 'existing' as const, approval };
    const current = await deps.toolCalls.get(input.turnId, input.toolCallId, tx);
    if (current?.status !== 'awaiting_approval') return { kind: 'not_waiting' as const };
    const expired = input.userId === null || Date.parse(approval.expiresAt) <= now.getTime();
    const decision = expired
      ? { approved: false, reason: TIMEOUT_REASON, args: null }
      : { approved: input.approved, reason: input.reason ?? null, args: input.approved ? editedArgs : null };
    // The call moves on first, by an update that waits for the call's row: a cancel that
    // committed since the read above leaves nothing to move, and then no decision is stored.
    if (decision.approved) {
      if (!(await deps.toolCalls.release(input.turnId, input.toolCallId, editedArgs ?? current.args, tx))) return { kind: 'not_waiting' as const };
      return { kind: 'decided' as const, approval: await deps.toolApprovals.decide(approval.approvalId, decision, tx), settled: null, expired };
    }
    const error = expired ? { code: 'approval_timeout', message: TIMEOUT_REASON } : { code: 'denied', message: input.reason ?? 'denied by a person' };
    const settled = await deps.toolCalls.settle(input.turnId, input.toolCallId, { status: 'failed', error, attempts: 0 }, tx);
    if (!settled) return { kind: 'not_waiting' as const };
    return { kind: 'decided' as const, approval: await deps.toolApprovals.decide(approval.approvalId, decision, tx), settled, expired };
  });
  if (stored.kind === 'not_found' || stored.kind === 'not_waiting') return { kind: stored.kind };

  const { approval } = stored;
  const decision = decisionOf(approval);
  if (stored.kind === 'decided') {
    observeDecision(deps, turn.traceparent, approval, stored.expired);
    const events = new TurnEvents(deps.eventLog, turn.conversationId, turn.id);
    events.emit({
      type: 'tool-approval-response',
      toolCallId: input.toolCallId,
      approved: decision.approved,
      ...(decision.reason !== null ? { reason: decision.reason } : {}),
    });
    if (stored.settled) events.emit(toolResultEvent(stored.settled));
    await events.flush();
  }
  await moveOn(deps, turn, call, decision);
  if (stored.kind === 'decided') return stored.expired && input.userId !== null && input.approved ? { kind: 'already_decided', decision } : { kind: 'decided', decision };
  return decision.approved === input.approved ? { kind: 'repeated', decision } : { kind: 'already_decided', decision };
}

/**
 * After a decision is stored: the approved call goes out to run (a client call only while it is
 * unanswered: a repeated decision must not ask clients again for a call they answered), and
 * the turn moves on: a denial may settle its step, and a wait left on clients only is announced.
 */
async function moveOn(
  deps: ApprovalDecisionDeps,
  turn: { id: string; conversationId: string; traceparent: string | null },
  call: ToolCallRecord,
  decision: StoredDecision,
): Promise<void> {
  const answered = call.kind === 'client' && SETTLED_TOOL_CALL_STATUSES.includes(call.status);
  if (decision.approved && !answered) await sendApprovedCall(deps, { ...call, args: decision.args ?? call.args });
  await moveParkedTurnOn(deps, turn, call.step);
}

/**
 * An approved call on its way: a server-run one as its own tool job, a client tool asked of its
 * clients (and its answer's timeout armed). Idempotent: the job ids are the call's.
 */
export async function sendApprovedCall(
  deps: Pick<ApprovalDecisionDeps, 'toolQueue' | 'tools' | 'eventLog'>,
  call: Pick<ToolCallRecord, 'turnId' | 'conversationId' | 'toolCallId' | 'step' | 'position' | 'kind' | 'name' | 'args'>,
): Promise<void> {
  if (call.kind !== 'client') {
    await enqueueApprovedCall(deps.toolQueue, { turnId: call.turnId, step: call.step, position: call.position, toolCallId: call.toolCallId });
    return;
  }
  const events = new TurnEvents(deps.eventLog, call.conversationId, call.turnId);
  await requestClientTool(deps, events, call);
  await events.flush();
}

function decisionOf(approval: ToolApproval): StoredDecision {
  const decision = approval.decision!;
  return {
    toolCallId: approval.toolCallId,
    approved: decision.approved,
    reason: decision.reason,
    args: decision.approved ? (decision.args ?? approval.args) : null,
    decidedAt: decision.decidedAt,
  };
}

/** The decision's time in the histogram, and its span event in the turn's trace. */
function observeDecision(deps: Pick<ApprovalDecisionDeps, 'metrics' | 'tracer'>, traceparent: string | null, approval: ToolApproval, expired: boolean): void {
  const outcome = expired ? 'timeout' : approval.decision!.approved ? 'approved' : 'denied';
  const waitedMs = Math.max(0, Date.parse(approval.decision!.decidedAt) - Date.parse(approval.requestedAt));
  deps.metrics.approvalDecisionTime.observe({ outcome }, waitedMs / 1000);
  recordApprovalDecision(deps.tracer, { traceparent, turnId: approval.turnId, toolCallId: approval.toolCallId, toolName: approval.toolName, outcome, waitedMs });
}

/** Why a decision was refused, for the route and the websocket frame alike; null when it was taken (or repeated). */
export function decisionRefusal(
  outcome: DecisionOutcome,
): { code: 'not_found' | 'invalid_request' | 'already_decided'; message: string; field?: string; decision?: StoredDecision } | null {
  switch (outcome.kind) {
    case 'decided':
    case 'repeated':
      return null;
    case 'not_found':
      return { code: 'not_found', message: 'no such tool call in this turn' };
    case 'not_gated':
      return { code: 'invalid_request', message: 'this call needs no approval', field: 'toolCallId' };
    case 'not_waiting':
      return { code: 'invalid_request', message: 'this call no longer waits for approval: its turn has ended', field: 'toolCallId' };
    case 'invalid_arguments':
      return { code: 'invalid_request', message: `args do not fit the tool's schema: ${outcome.message}`, field: 'args' };
    case 'already_decided':
      return {
        code: 'already_decided',
        message: `this call was ${outcome.decision.approved ? 'approved' : 'denied'} already; the first decision stands`,
        decision: outcome.decision,
      };
  }
}
