import { DelayedError, type Job } from 'bullmq';
import type { Logger } from 'pino';
import type { Tracer } from '@opentelemetry/api';
import { closeJobWorkers, createJobWorker, type JobWorkerSettings } from '../queue/job-worker';
import { queuePayloads, TOOL_QUEUE, type ToolJobData } from '../queue/job-catalog';
import { runToolJob, ToolJobAbortedError, type ToolJobDeps } from './tool-job-runner';
import type { TurnCancellations } from '../queue/turn-cancellations';
import { isBackendUnavailable } from '../errors/backend-unavailable';
import { failSpan } from '../tracing/fail-span';
import { GEN_AI, spanNames, SWITCHYARD } from '../tracing/span-attributes';
import { contextFrom } from '../tracing/trace-context';
import type { LocalToolSlots } from './local-tool-slots';

export interface ToolWorkerOptions extends JobWorkerSettings {
  /** This process's cancel signals: the jobs of a cancelled turn are aborted. */
  cancellations: TurnCancellations;
  deps: ToolJobDeps & { tracer: Tracer };
  logger: Logger;
  /** This process's local tool slots: a job whose call runs in one waits for that run. */
  localTools?: Pick<LocalToolSlots, 'runOf'>;
}

const CANCELLED = 'turn cancelled';

/** Runs tool jobs: each call of a step is its own job, so they run in parallel and retry alone. */
export async function startToolWorker(options: ToolWorkerOptions): Promise<{ close(graceMs: number): Promise<void> }> {
  const worker = createJobWorker(TOOL_QUEUE, options, processToolJob);
  async function processToolJob(job: Job, data: ToolJobData, token?: string, signal?: AbortSignal): Promise<void> {
    const abortSignal = signal ?? new AbortController().signal;
    // The call runs in a local slot of this process: its outcome stored and announced there
    // is this job's; otherwise (handed back, or not the slot's to announce) the job runs as usual.
    const local = data.kind === 'run-tool' ? options.localTools?.runOf(data.turnId, data.toolCallId) : undefined;
    if (local && (await local)) return;
    // A turn's jobs stop with their turn; an invocation has no turn to cancel it.
    const turnId = 'turnId' in data ? data.turnId : undefined;
    const release = turnId ? options.cancellations.register(turnId, () => worker.cancelJob(job.id!, CANCELLED)) : () => undefined;
    // An execution's span, under the step span that asked for the call; named once the call is read.
    // A client tool's timeout executes nothing and has none.
    const span =
      data.kind === 'client-timeout'
        ? undefined
        : options.deps.tracer.startSpan(
            spanNames.executeTool(),
            { attributes: { [GEN_AI.operationName]: 'execute_tool', [SWITCHYARD.jobName]: job.name, ...(turnId ? { [SWITCHYARD.turnId]: turnId } : {}) } },
            contextFrom(data.kind === 'run-tool' ? data.traceparent : undefined),
          );
    const logger = options.logger.child(jobIdsOf(data));
    let outcome;
    try {
      outcome = await runToolJob(options.deps, data, {
        signal: abortSignal,
        onWait: (error) => logger.warn({ jobId: job.id, err: error }, 'tool job waiting for PostgreSQL or Redis'),
        span,
        logger,
      });
    } catch (error) {
      if (!ToolJobAbortedError.isInstance(error)) {
        if (span) failSpan(span, isBackendUnavailable(error) ? 'backend_unavailable' : 'internal');
        throw error;
      }
      span?.setAttribute(SWITCHYARD.toolOutcome, 'aborted');
      // Cancelled with its turn: the cancel has settled the call, the job is done.
      if (abortSignal.reason === CANCELLED) return;
      // Shutdown: handed back at once, without spending an attempt, to run again elsewhere
      // with the same Idempotency-Key.
      outcome = { kind: 'retry', delayMs: 0 } as const;
    } finally {
      release();
      span?.end();
    }
    if (outcome.kind === 'retry') {
      await job.moveToDelayed(Date.now() + outcome.delayMs, token);
      throw new DelayedError();
    }
  }

  worker.on('failed', (job, error) => {
    const parsed = queuePayloads[TOOL_QUEUE].safeParse(job?.data);
    options.logger.debug({ ...(parsed.success ? jobIdsOf(parsed.data) : {}), jobId: job?.id, err: error }, 'tool job attempt failed');
  });
  worker.on('error', (error) => options.logger.error({ err: error }, 'tool worker error'));
  await worker.waitUntilReady();
  return { close: (graceMs: number) => closeJobWorkers([worker], graceMs) };
}

/** The ids a tool job's log lines carry as fields. */
function jobIdsOf(data: ToolJobData): { turnId: string; toolCallId: string } | { invocationId: string } {
  return data.kind === 'invoke' ? { invocationId: data.invocationId } : { turnId: data.turnId, toolCallId: data.toolCallId };
}
