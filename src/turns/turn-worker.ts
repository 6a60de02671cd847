import { DelayedError, UnrecoverableError, Worker, type ConnectionOptions, type Job } from 'bullmq';
import { jobFailure, readJobFailure, toJobFailure } from '../queue/job-failure';
import { TURN_JOB_OPTIONS, TURN_QUEUE, turnJobSchema } from '../queue/turn-queue';
import type { TurnCancellations } from './turn-cancellations';
import { endTurn } from './turn-ending';
import { runTurn, type TurnRunnerDeps } from './turn-runner';

export interface TurnWorkerOptions {
  connection: ConnectionOptions;
  prefix: string;
  concurrency: number;
  /** See README "Lock and stall settings" for the trade-off. */
  lockDurationMs: number;
  stalledIntervalMs: number;
  /** Lock losses a job survives before it fails as stalled. */
  maxStalledCount: number;
  /** This process's cancel signals: a cancelled turn's job is aborted. */
  cancellations: TurnCancellations;
  deps: TurnRunnerDeps;
}

const CANCELLED = 'cancelled';

/** The BullMQ side of running turns: job bookkeeping around {@link runTurn}. */
export async function startTurnWorker(options: TurnWorkerOptions): Promise<{ close(graceMs: number): Promise<void> }> {
  const { deps } = options;
  const worker = new Worker(
    TURN_QUEUE,
    (job: Job, token?: string, signal?: AbortSignal) =>
      processTurnJob(job, token, signal).catch((error: unknown) => {
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

  async function processTurnJob(job: Job, token?: string, signal?: AbortSignal): Promise<void> {
    const parsed = turnJobSchema.safeParse(job.data);
    if (!parsed.success) throw jobFailure('malformed_job', parsed.error);
    const { turnId } = parsed.data;
    const abortSignal = signal ?? new AbortController().signal;
    const release = options.cancellations.register(turnId, () => worker.cancelJob(job.id!, CANCELLED));
    let outcome;
    try {
      outcome = await runTurn(deps, { turnId, jobId: job.id!, isContinuation: job.name === 'continue-turn' }, abortSignal);
    } finally {
      release();
    }
    if (outcome.kind === 'stopped') {
      const reason = outcome.reason === 'aborted' ? String(abortSignal.reason) : outcome.reason;
      deps.logger.info({ turnId, jobId: job.id, reason }, 'turn attempt stopped');
    }
    if (abortSignal.aborted && abortSignal.reason !== CANCELLED) {
      // Shutdown or a lost lock: the turn is unfinished, so the job must not complete.
      // Handing it back at once lets another worker take it from its last committed step.
      await job.moveToDelayed(Date.now(), token);
      throw new DelayedError();
    }
    if (outcome.kind === 'delay') {
      await job.moveToDelayed(Date.now() + outcome.delayMs, token);
      throw new DelayedError();
    }
    if (outcome.kind === 'skipped') deps.logger.debug({ turnId, reason: outcome.reason }, 'turn job skipped');
  }

  worker.on('failed', (job, error) => {
    if (!job) return;
    const failure = readJobFailure(error.message);
    // Failures of ours are coded; BullMQ fails a job itself (uncoded) when its stall limit is hit.
    const final = failure === 'stalled' || error instanceof UnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? TURN_JOB_OPTIONS.attempts ?? 1);
    deps.logger.warn({ jobId: job.id, err: error, final }, 'turn job failed');
    const turnId = (job.data as { turnId?: string }).turnId;
    if (!final || !turnId) return;
    // An outage outlasted the job's attempts: the turn is not at fault, and the reconciler runs
    // the job again once PostgreSQL and Redis answer (ending the turn here would race it).
    if (failure === 'backend_unavailable') return;
    // Ends the turn whoever holds it, so that no turn hangs in `running`.
    const reason =
      failure === 'stalled'
        ? { code: 'stalled', message: 'the workers running this turn stopped too many times' }
        : { code: 'internal', message: 'the turn failed inside Switchyard' };
    deps.turns
      .get(turnId)
      .then((turn) => turn && endTurn(deps, turn, null, { status: 'failed', error: reason }))
      .catch((endError: unknown) => deps.logger.error({ err: endError, turnId }, 'could not mark the turn failed'));
  });
  // A worker that lost its lock must stop writing: another worker may own the turn now.
  worker.on('lockRenewalFailed', (jobIds) => {
    for (const jobId of jobIds) worker.cancelJob(jobId, 'lock lost');
  });
  worker.on('error', (error) => deps.logger.error({ err: error }, 'turn worker error'));

  await worker.waitUntilReady();

  return {
    async close(graceMs: number) {
      // worker.close() waits for active jobs with no limit of its own; past the grace
      // period the active jobs are cancelled and handed back to the queue.
      const timer = setTimeout(() => worker.cancelAllJobs('shutdown'), graceMs);
      try {
        await worker.close();
      } finally {
        clearTimeout(timer);
      }
    },
  };
}
