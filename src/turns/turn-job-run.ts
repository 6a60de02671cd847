import { SpanKind } from '@opentelemetry/api';
import { isBackendUnavailable } from '../errors/backend-unavailable';
import { failSpan } from '../tracing/fail-span';
import { spanNames, SWITCHYARD } from '../tracing/span-attributes';
import { contextFrom } from '../tracing/trace-context';
import { runTurn, type TurnRunnerDeps, type TurnRunOutcome } from './turn-runner';

/** One run of a turn's job, as BullMQ delivers it or as a local slot starts it. */
export interface TurnJobRun {
  turnId: string;
  conversationId?: string | undefined;
  traceparent?: string | undefined;
  jobId: string;
  jobName: string;
  /** The Redis key that lives while this run holds the job: a step's calls run here are held by it. */
  lockKey: string;
  /** Started by the process that admitted the turn, before any worker took its job. */
  handedOff?: boolean;
}

/**
 * {@link runTurn} in a span of its own, in the trace of the span that admitted the turn: the part
 * of a turn job's run that a BullMQ delivery (turn-worker.ts) and a local start
 * (local-turn-slots.ts) share. What becomes of the job after it is theirs.
 */
export async function runTurnJob(deps: TurnRunnerDeps, run: TurnJobRun, signal: AbortSignal): Promise<TurnRunOutcome> {
  const span = deps.tracer.startSpan(
    spanNames.runTurn,
    {
      kind: SpanKind.CONSUMER,
      attributes: { [SWITCHYARD.turnId]: run.turnId, [SWITCHYARD.jobName]: run.jobName, ...(run.handedOff ? { [SWITCHYARD.handedOff]: true } : {}) },
    },
    contextFrom(run.traceparent),
  );
  try {
    const { turnId, conversationId, jobId, lockKey } = run;
    const outcome = await runTurn(deps, { turnId, conversationId, jobId, isContinuation: run.jobName === 'continue-turn', span, lockKey }, signal);
    span.setAttribute(SWITCHYARD.turnOutcome, outcome.kind === 'stopped' ? `stopped_${outcome.reason}` : outcome.kind);
    return outcome;
  } catch (error) {
    failSpan(span, isBackendUnavailable(error) ? 'backend_unavailable' : 'internal');
    throw error;
  } finally {
    span.end();
  }
}
