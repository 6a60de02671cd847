import type { Metrics } from '../metrics/metrics';
import type { ToolJobData } from '../queue/tool-queue';
import type { ToolCallRecord, ToolCallsRepository } from '../store/tool-calls-repository';
import type { TurnsRepository } from '../store/turns-repository';
import type { ToolRegistry } from '../tools/tool';
import { answerClientToolCall, type ClientToolAnswerDeps } from './client-tool-answers';
import { toolResultEvent } from './tool-messages';
import { TurnEvents, type EventAppender } from './turn-events';

export interface ToolJobDeps extends ClientToolAnswerDeps {
  turns: TurnsRepository;
  toolCalls: ToolCallsRepository;
  tools: ToolRegistry;
  eventLog: EventAppender;
  metrics: Pick<Metrics, 'toolCalls'>;
}

/** The job failed but has attempts left: BullMQ retries it with backoff. */
export class RetryableToolError extends Error {
  readonly code = 'tool_retry';
}

/**
 * The attempt was aborted: its turn was cancelled (the cancel settles the call) or its worker
 * is stopping (the job must run again elsewhere). Either way its outcome is not the call's.
 */
export class ToolJobAbortedError extends Error {
  readonly code = 'tool_aborted';
}

/**
 * One attempt of a tool job. A call with a stored result is never executed again; an outcome
 * is stored before it is announced; only a retryable failure with attempts left, or an
 * aborted attempt, throws.
 */
export async function runToolJob(
  deps: ToolJobDeps,
  data: ToolJobData,
  context: { signal: AbortSignal; isLastAttempt: boolean },
): Promise<void> {
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
    return;
  }

  const running = await deps.toolCalls.markRunning(data.turnId, data.toolCallId);
  if (!running) return announceAgainIfUnseen(deps, data);
  const outcome = await deps.tools.execute(running.name, running.args, {
    turnId: data.turnId,
    toolCallId: data.toolCallId,
    attempt: running.attempts,
    signal: context.signal,
  });
  if (context.signal.aborted) throw new ToolJobAbortedError(`the attempt was aborted: ${String(context.signal.reason)}`);
  if (!outcome.ok && outcome.error.retryable && !context.isLastAttempt) {
    throw new RetryableToolError(`${outcome.error.code}: ${outcome.error.message}`);
  }
  const { retryable: _retryable, ...error } = outcome.ok ? { retryable: false } : outcome.error;
  const settled = await deps.toolCalls.settle(
    data.turnId,
    data.toolCallId,
    outcome.ok ? { status: 'succeeded', result: outcome.result } : { status: 'failed', error: error as { code: string; message: string } },
  );
  if (!settled) return;
  deps.metrics.toolCalls.inc({ status: settled.status });
  await announceResult(deps, settled);
}

/**
 * A redelivered job whose call is already settled: its worker may have died between storing
 * the result and announcing it. While the step's tool phase is still open, announce it again:
 * a client may see a result twice (it keys them by toolCallId), never miss one.
 */
async function announceAgainIfUnseen(deps: ToolJobDeps, data: ToolJobData): Promise<void> {
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
