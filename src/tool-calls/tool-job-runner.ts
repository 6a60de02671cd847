import type { Span } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { SwitchyardError } from '../errors/switchyard-error';
import { waitOutOutage } from '../errors/wait-out-outage';
import type { Metrics } from '../metrics/metrics';
import type { ToolJobData } from '../queue/job-catalog';
import type { ToolInvocationsRepository } from '../store/tool-invocations-repository';
import type { ToolCallContext, ToolOutcome, ToolRegistry } from '../tools/tool';
import { answerClientToolCall, type ClientToolAnswerDeps } from './client-tool-answers';
import { invocationExecution } from './invocation-execution';
import { decideApproval, type ApprovalDecisionDeps } from './tool-approvals';
import { decideAfterAttempt } from './tool-attempt-decision';
import type { SettledTool, ToolExecutionKind } from './tool-execution-kind';
import { turnCallExecution } from './turn-call-execution';
import { describeToolCall, recordToolOutcome } from '../tracing/tool-span';

export interface ToolJobDeps extends ClientToolAnswerDeps, ApprovalDecisionDeps {
  invocations: ToolInvocationsRepository;
  tools: ToolRegistry;
  metrics: Pick<Metrics, 'toolCalls' | 'toolAttempts' | 'toolDuration' | 'toolLabel' | 'approvalDecisionTime'>;
}

/**
 * The attempt was aborted: its turn was cancelled (the cancel settles the call) or its worker
 * is stopping (the job must run again elsewhere). Either way its outcome is not the call's.
 */
export class ToolJobAbortedError extends SwitchyardError<'tool_aborted'> {
  readonly code = 'tool_aborted';
}

/**
 * What the worker does with the job: done, or run it again after `delayMs` (the tool failed
 * retryably and has retries left; the job's own attempts are not spent on that).
 */
export type ToolJobOutcome = { kind: 'done' } | { kind: 'retry'; delayMs: number; error?: { code: string; message: string } };

const DONE: ToolJobOutcome = { kind: 'done' };

/** What the worker gives one attempt: the job's abort signal, its log and its span. */
export interface ToolJobContext {
  /** Aborted when the job's turn is cancelled or its worker gives it up (see ToolJobAbortedError). */
  signal: AbortSignal;
  /** Called each time a state write waits for PostgreSQL or Redis to come back. */
  onWait?: (error: unknown) => void;
  /** Bound to the job's ids (turnId and toolCallId, or invocationId); the call's lines add the rest. */
  logger: Logger;
  /** This execution's execute_tool span. */
  span?: Span;
}

/**
 * One attempt of a tool job: a turn's call or a direct invocation, each executed by the one
 * lifecycle of {@link runExecution}; or the timeout of a client tool's call, which executes
 * nothing and settles the call as no client answered it.
 */
export async function runToolJob(deps: ToolJobDeps, data: ToolJobData, context: ToolJobContext): Promise<ToolJobOutcome> {
  switch (data.kind) {
    case 'run-tool':
      return runExecution(deps, turnCallExecution(deps, { turnId: data.turnId, toolCallId: data.toolCallId }, { resumesParkedTurn: data.approved === true }), context);
    case 'invoke':
      return runExecution(deps, invocationExecution(deps, data.invocationId), context);
    case 'client-timeout':
      await timeOutClientCall(deps, data);
      return DONE;
    case 'approval-timeout':
      await decideApproval(deps, { userId: null, turnId: data.turnId, toolCallId: data.toolCallId, approved: false });
      return DONE;
  }
}

/**
 * One execution of a tool, whatever its kind (a turn's call, a direct invocation):
 * 1. Mark the record running, which counts the attempt on it. A settled record is never
 *    executed again: the kind announces it again if it may have gone unseen, and the job is done.
 *    A record a local tool slot holds is not executed here either: the job looks again later.
 * 2. Name the span after the tool and log the start.
 * 3. Execute the tool, counted and timed by tool, bounded by its timeout and the job's signal,
 *    with the kind's ids (an http tool's Idempotency-Key, the same on every attempt).
 * 4. An aborted attempt throws ToolJobAbortedError: its outcome is not the call's.
 * 5. A retryable failure with retries left is handed back as a retry, stored nowhere. A tool's
 *    `retries` are counted on its record (`attempts`), not in the job's attempts, which are left
 *    for Switchyard's own trouble.
 * 6. Store the outcome, unless one is stored already (a cancel came first): then that one stands.
 * 7. Announce it, once it is stored.
 * The writes of steps 1 and 6 wait out an outage of PostgreSQL rather than fail the job: a result
 * once had is stored, never re-earned by running the tool again. Throws only when the attempt was
 * aborted or a store stayed away.
 */
export async function runExecution<Settled extends SettledTool>(deps: ToolJobDeps, kind: ToolExecutionKind<Settled>, context: ToolJobContext): Promise<ToolJobOutcome> {
  const running = await waitOutOutage(() => kind.markRunning(), context);
  // Run by a local slot: looked at again once its hold would lapse (the job's attempts unspent).
  if (running && 'heldForMs' in running) return { kind: 'retry', delayMs: running.heldForMs };
  if (!running) {
    const again = await kind.announceAgain();
    if (again) return { kind: 'retry', delayMs: again.heldForMs };
    recordToolOutcome(context.span, 'already_settled');
    return DONE;
  }

  const tool = deps.tools.get(running.toolName);
  describeToolCall(context.span, { toolName: running.toolName, toolCallId: running.toolCallId, kind: tool?.kind, attempts: running.attempts });
  const log = context.logger.child(running.logFields);
  const call = { tool: running.toolName, attempt: running.attempts };
  log.info(call, 'tool call started');

  const startedAt = performance.now();
  const outcome = await execute(deps, running.toolName, running.args, { ...kind.ids, attempt: running.attempts, signal: context.signal });
  const durationMs = Math.round(performance.now() - startedAt);

  if (context.signal.aborted) throw new ToolJobAbortedError(`the attempt was aborted: ${String(context.signal.reason)}`);

  const decision = decideAfterAttempt(outcome, running.attempts, tool?.retries ?? 0);
  recordToolOutcome(context.span, decision.kind === 'retry' ? 'retry' : decision.settlement.status, outcome.ok ? undefined : outcome.error.code);
  if (decision.kind === 'retry') {
    const { error, delayMs } = decision;
    log.warn({ ...call, durationMs, error: error.code, reason: error.message, retryInMs: delayMs }, 'tool call failed; it runs again');
    return decision;
  }

  const settled = await waitOutOutage(() => kind.settle(decision.settlement), context);
  if (!settled) return DONE;
  log.info({ ...call, durationMs, status: settled.status, error: settled.error?.code }, 'tool call finished');

  await kind.announce(settled);
  return DONE;
}

/** One execution, counted and timed by tool. */
async function execute(deps: ToolJobDeps, name: string, args: unknown, ctx: ToolCallContext): Promise<ToolOutcome> {
  const tool = deps.metrics.toolLabel(name);
  deps.metrics.toolAttempts.inc({ tool });
  const startedAt = performance.now();
  try {
    return await deps.tools.execute(name, args, ctx);
  } finally {
    deps.metrics.toolDuration.observe({ tool }, (performance.now() - startedAt) / 1000);
  }
}

/** A client tool's call that no client answered in its tool's time: settled as failed with `timeout`. */
async function timeOutClientCall(deps: ToolJobDeps, data: { turnId: string; toolCallId: string }): Promise<void> {
  const call = await deps.toolCalls.get(data.turnId, data.toolCallId);
  const timeoutMs = call ? deps.tools.get(call.name)?.timeoutMs : undefined;
  await answerClientToolCall(deps, {
    userId: null,
    turnId: data.turnId,
    toolCallId: data.toolCallId,
    answer: { error: { code: 'timeout', message: `no client answered within ${timeoutMs ?? 'the'} ms` } },
    attempts: 0,
  });
}
