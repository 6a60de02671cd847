import type { Span } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { SwitchyardError } from '../errors/switchyard-error';
import { waitOutOutage } from '../errors/wait-out-outage';
import type { Metrics } from '../metrics/metrics';
import type { ToolJobData } from '../queue/tool-queue';
import type { ToolCallRecord, ToolCallsRepository } from '../store/tool-calls-repository';
import type { ToolInvocationsRepository } from '../store/tool-invocations-repository';
import type { TurnsRepository } from '../store/turns-repository';
import type { ToolCallContext, ToolOutcome, ToolRegistry } from '../tools/tool';
import { answerClientToolCall, type ClientToolAnswerDeps } from './client-tool-answers';
import { toolResultEvent } from './tool-messages';
import { TurnEvents, type EventAppender } from '../event-log/turn-events';
import { describeToolCall, recordToolOutcome } from '../tracing/tool-span';

export interface ToolJobDeps extends ClientToolAnswerDeps {
  invocations: ToolInvocationsRepository;
  turns: TurnsRepository;
  toolCalls: ToolCallsRepository;
  tools: ToolRegistry;
  eventLog: EventAppender;
  metrics: Pick<Metrics, 'toolCalls' | 'toolAttempts' | 'toolDuration' | 'toolLabel'>;
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

/** Before a tool's retry n (1, 2, …): 500 ms, doubling. */
export const toolRetryDelayMs = (retry: number) => 500 * 2 ** (retry - 1);

/**
 * One attempt of a tool job. A call with a stored result is never executed again; an outcome
 * is stored before it is announced. A tool's `retries` are for its own failures: they are
 * counted on the call (its `attempts`), not in the job's attempts, which are left for
 * Switchyard's own trouble; and the state writes around an execution wait out an outage of
 * PostgreSQL rather than fail the job (a result once had is stored, never re-earned by
 * running the tool again). Throws only when the attempt was aborted or a store stayed away.
 */
export interface ToolJobContext {
  signal: AbortSignal;
  onWait?: (error: unknown) => void;
  /** Bound to the job's ids (turnId and toolCallId, or invocationId); the call's lines add the rest. */
  logger: Logger;
  /** This execution's execute_tool span. */
  span?: Span;
}

export async function runToolJob(deps: ToolJobDeps, data: ToolJobData, context: ToolJobContext): Promise<ToolJobOutcome> {
  const { signal } = context;
  if (data.kind === 'client-timeout') {
    const call = await deps.toolCalls.get(data.turnId, data.toolCallId);
    const timeoutMs = call ? deps.tools.get(call.name)?.timeoutMs : undefined;
    await answerClientToolCall(deps, {
      userId: null,
      turnId: data.turnId,
      toolCallId: data.toolCallId,
      answer: { error: { code: 'timeout', message: `no client answered within ${timeoutMs ?? 'the'} ms` } },
      attempts: 0,
    });
    return DONE;
  }

  if (data.kind === 'invoke') return runInvocation(deps, data.invocationId, context);

  const running = await waitOutOutage(() => deps.toolCalls.markRunning(data.turnId, data.toolCallId), context);
  if (!running) {
    recordToolOutcome(context.span, 'already_settled');
    await announceAgainIfUnseen(deps, data);
    return DONE;
  }
  const tool = deps.tools.get(running.name);
  describeToolCall(context.span, { toolName: running.name, toolCallId: data.toolCallId, kind: tool?.kind, attempts: running.attempts });
  const log = context.logger.child({ conversationId: running.conversationId, step: running.step });
  const call = { tool: running.name, attempt: running.attempts };
  log.info(call, 'tool call started');
  const startedAt = performance.now();
  const outcome = await execute(deps, running.name, running.args, {
    turnId: data.turnId,
    toolCallId: data.toolCallId,
    attempt: running.attempts,
    signal,
  });
  const durationMs = Math.round(performance.now() - startedAt);
  if (signal.aborted) throw new ToolJobAbortedError(`the attempt was aborted: ${String(signal.reason)}`);
  const retry = retryOf(outcome, running.attempts, tool?.retries ?? 0);
  recordToolOutcome(context.span, retry ? 'retry' : outcome.ok ? 'succeeded' : 'failed', outcome.ok ? undefined : outcome.error.code);
  if (retry) {
    log.warn({ ...call, durationMs, error: retry.error?.code, reason: retry.error?.message, retryInMs: retry.delayMs }, 'tool call failed; it runs again');
    return retry;
  }
  const settled = await waitOutOutage(() => deps.toolCalls.settle(data.turnId, data.toolCallId, settlementOf(outcome)), context);
  if (!settled) return DONE;
  log.info({ ...call, durationMs, status: settled.status, error: settled.error?.code }, 'tool call finished');
  deps.metrics.toolCalls.inc({ tool: deps.metrics.toolLabel(settled.name), status: settled.status });
  await announceResult(deps, settled);
  return DONE;
}

/**
 * A direct invocation: the same attempt, retry and outage rules as a turn's call. Its
 * downstream Idempotency-Key is `<invocationId>:invoke`, and the id is derived from the
 * caller's Idempotency-Key, so a repeat of the request reaches the tool with the same key.
 */
async function runInvocation(deps: ToolJobDeps, invocationId: string, context: ToolJobContext): Promise<ToolJobOutcome> {
  const running = await waitOutOutage(() => deps.invocations.markRunning(invocationId), context);
  if (!running) {
    recordToolOutcome(context.span, 'already_settled');
    return DONE;
  }
  const tool = deps.tools.get(running.toolName);
  describeToolCall(context.span, { toolName: running.toolName, kind: tool?.kind, attempts: running.attempts });
  const outcome = await execute(deps, running.toolName, running.params, {
    turnId: invocationId,
    toolCallId: 'invoke',
    attempt: running.attempts,
    signal: context.signal,
  });
  if (context.signal.aborted) throw new ToolJobAbortedError(`the attempt was aborted: ${String(context.signal.reason)}`);
  const retry = retryOf(outcome, running.attempts, tool?.retries ?? 0);
  recordToolOutcome(context.span, retry ? 'retry' : outcome.ok ? 'succeeded' : 'failed', outcome.ok ? undefined : outcome.error.code);
  if (retry) {
    const failure = { error: retry.error?.code, reason: retry.error?.message, retryInMs: retry.delayMs };
    context.logger.warn({ tool: running.toolName, attempt: running.attempts, ...failure }, 'tool call failed; it runs again');
    return retry;
  }
  await waitOutOutage(() => deps.invocations.settle(invocationId, settlementOf(outcome)), context);
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

/** Another attempt after a delay, for a retryable failure with retries left (counted on the call). */
function retryOf(outcome: ToolOutcome, attempts: number, retries: number): Extract<ToolJobOutcome, { kind: 'retry' }> | null {
  if (outcome.ok || !outcome.error.retryable || attempts > retries) return null;
  return { kind: 'retry', delayMs: toolRetryDelayMs(attempts), error: { code: outcome.error.code, message: outcome.error.message } };
}

function settlementOf(outcome: ToolOutcome): { status: 'succeeded'; result: unknown } | { status: 'failed'; error: { code: string; message: string } } {
  if (outcome.ok) return { status: 'succeeded', result: outcome.result };
  const { retryable: _retryable, ...error } = outcome.error;
  return { status: 'failed', error };
}

/**
 * A redelivered job whose call is already settled: its worker may have died between storing
 * the result and announcing it. While the step's tool phase is still open, announce it again:
 * a client may see a result twice (it keys them by toolCallId), never miss one.
 */
async function announceAgainIfUnseen(deps: ToolJobDeps, data: { turnId: string; toolCallId: string }): Promise<void> {
  const [call, turn] = await Promise.all([deps.toolCalls.get(data.turnId, data.toolCallId), deps.turns.get(data.turnId)]);
  if (!call || (call.status !== 'succeeded' && call.status !== 'failed')) return;
  if (turn?.status !== 'waiting_tools' || turn.step !== call.step) return;
  await announceResult(deps, call);
}

async function announceResult(deps: ToolJobDeps, settled: ToolCallRecord): Promise<void> {
  const events = new TurnEvents(deps.eventLog, settled.conversationId, settled.turnId);
  events.emit(toolResultEvent(settled));
  await events.flush();
}
