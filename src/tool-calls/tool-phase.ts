import type { FlowProducer, Queue } from 'bullmq';
import { fanOutToolCalls, scheduleCallTimeout, type FanOutTrace } from '../queue/tool-queue';
import { requestClientTool } from './client-tool-request';
import type { ToolApprovalsRepository } from '../store/tool-approvals-repository';
import { sendApprovedCall } from './tool-approvals';
import type { ConversationsRepository } from '../store/conversations-repository';
import type { Db, Queryable } from '../store/db';
import type { MessagesRepository } from '../store/messages-repository';
import { SETTLED_TOOL_CALL_STATUSES, type NewToolCall, type ToolCallRecord, type StepState, type ToolCallsRepository } from '../store/tool-calls-repository';
import type { TurnsRepository } from '../store/turns-repository';
import type { ToolRegistry } from '../tools/tool';
import { clientToolResultEvent, toolResultEvent } from './tool-messages';
import type { EventAppender, TurnEvents } from '../event-log/turn-events';
import type { LocalToolSlots } from './local-tool-slots';

export interface ToolPhaseDeps {
  db: Db;
  conversations: ConversationsRepository;
  turns: TurnsRepository;
  messages: MessagesRepository;
  toolCalls: ToolCallsRepository;
  toolApprovals: ToolApprovalsRepository;
  tools: ToolRegistry;
  eventLog: EventAppender;
  flows: FlowProducer;
  toolQueue: Queue;
  /** This process's local tool slots (a worker's): a step's server calls run there at once. */
  localTools?: Pick<LocalToolSlots, 'runStep'>;
}

/**
 * What the runner does after looking at a step's tool calls ('no_tools': the step had none;
 * 'settled_here': every call ran in this process's local slots and has its outcome, stored and
 * announced, and the turn still waits for them: see `TurnsRepository.resumeAfterLocalTools`).
 */
export type ToolPhaseOutcome = 'proceed' | 'no_tools' | 'wait' | 'fenced' | 'settled_here';

/** The step's commit parks the turn for its tool jobs: some call is pending and runs on a server. */
export const goesToToolJobs = (calls: NewToolCall[]) => calls.some((call) => call.status === 'pending' && call.kind !== 'client');

const isSettled = (call: { status: string }) => SETTLED_TOOL_CALL_STATUSES.includes(call.status as ToolCallRecord['status']);
/** Settled by something outside the turn's flow: a client's answer, or a person's decision and what follows it. */
const settledFromOutside = (call: Pick<ToolCallRecord, 'kind' | 'approvalId'>) => call.kind === 'client' || call.approvalId !== null;

/**
 * Right after a step with tool calls is committed: announce the calls, settle the invalid
 * ones, ask clients for client tools, and fan the server-run ones out as a flow whose parent
 * continues the turn. 'proceed' when nothing is left to wait for.
 */
export async function startToolPhase(
  deps: ToolPhaseDeps,
  context: {
    turnId: string;
    attempt: number;
    step: number;
    events: TurnEvents;
    trace?: FanOutTrace;
    /** The job running the step: its signal, and the Redis key of its lock (what holds calls run here). */
    job?: { signal: AbortSignal; lockKey: string };
  },
  calls: NewToolCall[],
): Promise<ToolPhaseOutcome> {
  const { events } = context;
  events.emit({
    type: 'tool_processing_start',
    toolCalls: calls.map((call) => ({ toolCallId: call.toolCallId, toolName: call.name, args: call.args ?? null })),
  });
  for (const call of calls) {
    if ('error' in call) events.emit({ type: 'tool-result', toolCallId: call.toolCallId, error: call.error, attempts: 0, durationMs: 0 });
  }
  const pending = calls.filter((call) => call.status === 'pending');
  const server = pending.filter((call) => call.kind !== 'client');
  const client = pending.filter((call) => call.kind === 'client');
  const gated = calls.flatMap((call) => (call.status === 'awaiting_approval' ? [call] : []));
  if (pending.length === 0 && gated.length === 0) return 'proceed';

  // Parked before the fan-out, so a continuation that starts at once finds the turn waiting: a
  // step with server calls by its commit (see `goesToToolJobs`), one without here.
  if (server.length === 0 && !(await deps.turns.setWaiting(context.turnId, context.attempt, client.length > 0 ? 'clients' : 'approvals'))) return 'fenced';
  for (const call of gated) await requestApproval(deps, events, call, call.approval);
  for (const call of client) await requestClientTool(deps, events, call);
  if (server.length === 0) events.emit({ type: 'turn-waiting', toolCallIds: [...client, ...gated].map((call) => call.toolCallId) });
  await events.flush();
  if (server.length === 0) return 'wait';
  // Only server calls: they run here at once, held by this turn job, which BullMQ keeps active
  // (and redelivers once its lock lapses, should this process die: its take then fans out
  // the calls left unsettled, resumeToolPhase). The flow is added only for calls handed back.
  if (deps.localTools && context.job && server.length === pending.length && gated.length === 0) {
    const settledHere = await deps.localTools.runStep({
      turnId: context.turnId,
      toolCallIds: server.map((call) => call.toolCallId),
      holder: context.job.lockKey,
      signal: context.job.signal,
      ...(context.trace?.tools ? { traceparent: context.trace.tools } : {}),
    });
    if (settledHere) return 'settled_here';
    // Stopped (a cancel ends the turn; a shutdown hands this job back and a lost lock lets it
    // go to another worker): the take that runs it next fans out what is left, once.
    if (context.job.signal.aborted) return 'wait';
    // Not run here (no free slots, no claim): the calls' jobs run them; one settled here finds
    // its outcome stored and does not run it again.
    await fanOut(deps, context, server);
    return 'wait';
  }
  await fanOut(deps, context, server);
  return 'wait';
}

/**
 * A turn taken up after its last committed step asked for tools (the flow's parent, a client's
 * last answer, or a restart after a crash). Completes the tool phase when every call is settled.
 * `tookOverToolPhase`: the turn was waiting for its tool jobs or its clients' answers and this
 * is neither their flow's parent nor an answer's resume (the job that started the phase was
 * redelivered, or the reconciler re-enqueued it). A tool worker, or the API process that took a
 * client's answer, may then have died between storing a result and announcing it, and the phase
 * may complete before anything announces it: the settled results are announced again (a client
 * keys results by toolCallId, so one seen twice is harmless; one never seen is not).
 */
export async function resumeToolPhase(
  deps: ToolPhaseDeps,
  context: {
    turnId: string;
    attempt: number;
    step: number;
    events: TurnEvents;
    isContinuation: boolean;
    tookOverToolPhase?: boolean;
    /** Where a fan-out made again joins the turn's trace. */
    trace?: FanOutTrace;
    /** The step's state, when the take read it (read here otherwise; the phase's end is announced here when the take wrote the tool messages). */
    stepState?: StepState | undefined;
  },
): Promise<ToolPhaseOutcome> {
  const { calls, toolMessagesWritten, toolMessagesWrittenHere } = context.stepState ?? (await deps.toolCalls.stepState(context.turnId, context.step));
  if (calls.length === 0) return 'no_tools';
  if (toolMessagesWritten) return 'proceed';
  if (context.tookOverToolPhase) {
    for (const call of calls) {
      if (!isSettled(call)) continue;
      if (call.kind === 'client') context.events.emit(clientToolResultEvent(call));
      else if (call.attempts > 0) context.events.emit(toolResultEvent(call));
    }
  }
  if (toolMessagesWrittenHere) {
    announcePhaseEnd(context.events, calls);
    return 'proceed';
  }

  const unsettledServer = calls.filter((call) => !isSettled(call) && !settledFromOutside(call));
  if (unsettledServer.length > 0) {
    if (!context.isContinuation) {
      // The worker died between committing the step and fanning out: fan out again (the job
      // ids are the same, so calls already out are not duplicated).
      if (!(await deps.turns.setWaiting(context.turnId, context.attempt, 'tools'))) return 'fenced';
      await fanOut(deps, context, unsettledServer);
      return 'wait';
    }
    // The flow ran its parent, so these jobs ended without storing a result (their workers
    // kept dying): settle them as failed rather than wait forever.
    for (const call of unsettledServer) {
      const settled = await deps.toolCalls.settle(call.turnId, call.toolCallId, {
        status: 'failed',
        error: { code: 'tool_lost', message: 'the tool job ended without a result' },
      });
      if (settled) context.events.emit(toolResultEvent(settled));
    }
  }

  const waitingOnAnswers = calls.some((call) => !isSettled(call) && settledFromOutside(call));
  if (waitingOnAnswers) {
    // Taken over (a crash, or the reconciler found a timeout or an approved call's job gone):
    // what the parked calls wait on is armed again; every job id is the call's, so nothing twice.
    if (!context.isContinuation) await rearmParkedCalls(deps, context, calls);
    const parked = await parkForAnswers(deps, context, calls[0]!.conversationId);
    if (parked === 'fenced') return 'fenced';
    if (parked.length > 0) {
      context.events.emit({ type: 'turn-waiting', toolCallIds: parked });
      await context.events.flush();
      return 'wait';
    }
  }
  // Calls settled since the first read (here, or by a client's answer) are read again.
  const settledMeanwhile = unsettledServer.length > 0 || waitingOnAnswers;
  return completeToolPhase(deps, context, settledMeanwhile ? await deps.toolCalls.listForStep(context.turnId, context.step) : calls);
}

/** Sends the step's server calls out as one flow whose parent continues the turn. */
function fanOut(deps: ToolPhaseDeps, context: { turnId: string; step: number; trace?: FanOutTrace }, calls: { toolCallId: string; position: number }[]): Promise<void> {
  return fanOutToolCalls(deps.flows, {
    turnId: context.turnId,
    step: context.step,
    calls: calls.map((call) => ({ toolCallId: call.toolCallId, position: call.position })),
    trace: context.trace,
  });
}

/**
 * Parks the turn for its unsettled calls (unanswered client calls, calls awaiting or past their
 * approval); returns their ids, or none when every call has its outcome by now. Parked as
 * `approvals` when every one of them waits for a person (shown as `waiting_approval`). Under the
 * conversation's row lock, the lock under which an answer or a decision decides whether to
 * resume the turn (parked-turn-resume.ts): either it finds the turn parked and resumes it, or
 * this read sees its outcome and the turn goes on here. Parking
 * on a read taken before the lock would leave a turn waiting for an answer it already has.
 */
async function parkForAnswers(deps: ToolPhaseDeps, context: { turnId: string; attempt: number; step: number }, conversationId: string): Promise<string[] | 'fenced'> {
  return deps.db.transaction(async (tx) => {
    await deps.conversations.lock(conversationId, tx);
    const unanswered = (await deps.toolCalls.listForStep(context.turnId, context.step, tx)).filter((call) => !isSettled(call));
    if (unanswered.length === 0) return [];
    const awaiting = unanswered.every((call) => call.status === 'awaiting_approval') ? 'approvals' : 'clients';
    if (!(await deps.turns.setWaiting(context.turnId, context.attempt, awaiting, tx))) return 'fenced';
    return unanswered.map((call) => call.toolCallId);
  });
}

/** Writes one tool message per call (all settled), in the assistant's order, then announces the phase's end. */
async function completeToolPhase(
  deps: ToolPhaseDeps,
  context: { turnId: string; attempt: number; step: number; events: TurnEvents },
  calls: ToolCallRecord[],
): Promise<ToolPhaseOutcome> {
  const written = await deps.messages.insertToolMessages({ turnId: context.turnId, step: context.step }, deps.db, { attempt: context.attempt });
  if (written === 'fenced') return 'fenced';
  // An earlier run completed the phase (and announced it) after this one read the step.
  if (written === 'existed') return 'proceed';
  announcePhaseEnd(context.events, calls);
  return 'proceed';
}

function announcePhaseEnd(events: TurnEvents, calls: ToolCallRecord[]): void {
  announcePhaseCounts(events, { results: calls.length, failed: calls.filter((call) => call.status !== 'succeeded').length });
}

export function announcePhaseCounts(events: TurnEvents, counts: { results: number; failed: number }): void {
  events.emit({ type: 'tool_processing_complete', ...counts });
}

/**
 * Arms again what a parked step's calls wait on: an undecided call's request (announced again:
 * the run that made it may have died before) and its expiry, an approved server call's tool job,
 * and an unanswered client call's request and its answer's timeout (the run that committed the
 * step, or the process that stored the call's approval, may have died before asking the
 * clients; without the timeout nothing would ever settle the call).
 */
async function rearmParkedCalls(deps: ToolPhaseDeps, context: { turnId: string; step: number; events: TurnEvents }, calls: ToolCallRecord[]): Promise<void> {
  const parked = calls.filter((call) => settledFromOutside(call) && !isSettled(call));
  if (parked.length === 0) return;
  const approvals = new Map((await deps.toolApprovals.listForStep(context.turnId, context.step)).map((approval) => [approval.toolCallId, approval]));
  for (const call of parked) {
    if (call.status === 'awaiting_approval') {
      const approval = approvals.get(call.toolCallId);
      if (approval) await requestApproval(deps, context.events, call, approval);
    } else if (call.kind === 'client') {
      await requestClientTool(deps, context.events, call);
    } else {
      await sendApprovedCall(deps, call);
    }
  }
}

/** Asks for a person's decision on a call (sent with the caller's next flush) and arms its expiry. */
async function requestApproval(
  deps: Pick<ToolPhaseDeps, 'toolQueue'>,
  events: TurnEvents,
  call: Pick<ToolCallRecord, 'turnId' | 'toolCallId' | 'step' | 'position' | 'name' | 'args'>,
  approval: { approvalId: string; expiresAt: string },
): Promise<void> {
  events.emit({ type: 'tool-approval-request', toolCallId: call.toolCallId, toolName: call.name, args: call.args, approvalId: approval.approvalId, expiresAt: approval.expiresAt });
  await scheduleCallTimeout(deps.toolQueue, 'approval-timeout', {
    turnId: call.turnId,
    step: call.step,
    position: call.position,
    toolCallId: call.toolCallId,
    delayMs: Date.parse(approval.expiresAt) - Date.now(),
  });
}
