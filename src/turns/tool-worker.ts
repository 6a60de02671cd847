import { DelayedError, Worker, type ConnectionOptions, type Job } from 'bullmq';
import type { Logger } from 'pino';
import { jobFailure, toJobFailure } from '../queue/job-failure';
import { TOOL_QUEUE, toolJobSchema } from '../queue/tool-queue';
import { runToolJob, ToolJobAbortedError, type ToolJobDeps } from './tool-job-runner';
import type { TurnCancellations } from './turn-cancellations';

export interface ToolWorkerOptions {
  connection: ConnectionOptions;
  prefix: string;
  concurrency: number;
  lockDurationMs: number;
  stalledIntervalMs: number;
  /** Lock losses a job survives before it fails as stalled. */
  maxStalledCount: number;
  /** This process's cancel signals: the jobs of a cancelled turn are aborted. */
  cancellations: TurnCancellations;
  deps: ToolJobDeps;
  logger: Logger;
}

const CANCELLED = 'turn cancelled';

/** Runs tool jobs: each call of a step is its own job, so they run in parallel and retry alone. */
export async function startToolWorker(options: ToolWorkerOptions): Promise<{ close(graceMs: number): Promise<void> }> {
  const worker = new Worker(
    TOOL_QUEUE,
    (job: Job, token?: string, signal?: AbortSignal) =>
      processToolJob(job, token, signal).catch((error: unknown) => {
        throw toJobFailure(error);
      }),
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency,
      lockDuration: options.lockDurationMs,
      stalledInterval: options.stalledIntervalMs,
      maxStalledCount: options.maxStalledCount,
    },
  );
  async function processToolJob(job: Job, token?: string, signal?: AbortSignal): Promise<void> {
    const parsed = toolJobSchema.safeParse(job.data);
    if (!parsed.success) throw jobFailure('malformed_job', parsed.error);
    const abortSignal = signal ?? new AbortController().signal;
    // A turn's jobs stop with their turn; an invocation has no turn to cancel it.
    const turnId = 'turnId' in parsed.data ? parsed.data.turnId : undefined;
    const release = turnId ? options.cancellations.register(turnId, () => worker.cancelJob(job.id!, CANCELLED)) : () => undefined;
    let outcome;
    try {
      outcome = await runToolJob(options.deps, parsed.data, {
        signal: abortSignal,
        onWait: (error) => options.logger.warn({ jobId: job.id, err: error }, 'tool job waiting for PostgreSQL or Redis'),
      });
    } catch (error) {
      if (!(error instanceof ToolJobAbortedError)) throw error;
      // Cancelled with its turn: the cancel has settled the call, the job is done.
      if (abortSignal.reason === CANCELLED) return;
      // Shutdown: handed back at once, without spending an attempt, to run again elsewhere
      // with the same Idempotency-Key.
      outcome = { kind: 'retry', delayMs: 0 } as const;
    } finally {
      release();
    }
    if (outcome.kind === 'retry') {
      if (outcome.error) options.logger.debug({ jobId: job.id, err: outcome.error, retryInMs: outcome.delayMs }, 'tool failed; retrying');
      await job.moveToDelayed(Date.now() + outcome.delayMs, token);
      throw new DelayedError();
    }
  }

  worker.on('failed', (job, error) => options.logger.debug({ jobId: job?.id, err: error }, 'tool job attempt failed'));
  worker.on('error', (error) => options.logger.error({ err: error }, 'tool worker error'));
  await worker.waitUntilReady();
  return {
    async close(graceMs: number) {
      const timer = setTimeout(() => worker.cancelAllJobs('shutdown'), graceMs);
      try {
        await worker.close();
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
