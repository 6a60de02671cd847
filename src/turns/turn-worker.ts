import { DelayedError, UnrecoverableError, type Job, type Worker } from 'bullmq';
import { readJobFailure } from '../queue/job-failure';
import { closeJobWorkers, createJobWorker, type JobWorkerSettings } from '../queue/job-worker';
import { BATCH_TURN_QUEUE, JOB_CATALOG, TURN_QUEUE, type TurnJobData } from '../queue/job-catalog';
import type { TurnCancellations } from '../queue/turn-cancellations';
import { endTurn } from './turn-ending';
import { logTurnEnd, type TurnRunnerDeps } from './turn-runner';
import { runTurnJob } from './turn-job-run';

export interface TurnWorkerOptions extends JobWorkerSettings {
  /**
   * Batch item turns this process starts at once, from their own queue: the interactive slots
   * above never hold a batch turn's start, so interactive turns keep their time to first token
   * while a batch runs (its continuations run on the interactive queue, ahead of new turns).
   */
  batchConcurrency: number;
  /** This process's cancel signals: a cancelled turn's job is aborted. */
  cancellations: TurnCancellations;
  deps: TurnRunnerDeps;
}

const CANCELLED = 'cancelled';

/**
 * The interactive BullMQ worker's share of a process's turn slots: a process that starts turns
 * itself (local-turn-slots.ts) takes its slots from the same WORKER_CONCURRENCY.
 */
export interface QueueTurnSlots {
  /** Jobs of the interactive queue running in this process now. */
  running(): number;
  /** How many the worker may run at once from now on (at least 1). */
  setConcurrency(concurrency: number): void;
}

/** The BullMQ side of running turns: job bookkeeping around runTurn (turn-runner.ts), on the interactive and the batch queue. */
export async function startTurnWorker(options: TurnWorkerOptions): Promise<{ close(graceMs: number): Promise<void>; interactive: QueueTurnSlots }> {
  let running = 0;
  const interactive = startQueueWorker(options, TURN_QUEUE, options.concurrency, (delta) => (running += delta));
  const workers = [interactive, startQueueWorker(options, BATCH_TURN_QUEUE, options.batchConcurrency)];
  await Promise.all(workers.map((worker) => worker.waitUntilReady()));
  return {
    close: (graceMs: number) => closeJobWorkers(workers, graceMs),
    interactive: {
      running: () => running,
      setConcurrency: (concurrency) => {
        interactive.concurrency = Math.max(1, concurrency);
      },
    },
  };
}

function startQueueWorker(
  options: TurnWorkerOptions,
  queueName: typeof TURN_QUEUE | typeof BATCH_TURN_QUEUE,
  concurrency: number,
  count: (delta: number) => void = () => undefined,
): Worker {
  const { deps } = options;
  const worker = createJobWorker(queueName, { ...options, concurrency }, processTurnJob);

  async function processTurnJob(job: Job, data: TurnJobData, token?: string, signal?: AbortSignal): Promise<void> {
    const { turnId, conversationId, traceparent } = data;
    const abortSignal = signal ?? new AbortController().signal;
    const release = options.cancellations.register(turnId, () => worker.cancelJob(job.id!, CANCELLED));
    count(1);
    let outcome;
    try {
      const lockKey = `${job.queueQualifiedName}:${job.id!}:lock`;
      outcome = await runTurnJob(deps, { turnId, conversationId, traceparent, jobId: job.id!, jobName: job.name, lockKey }, abortSignal);
    } finally {
      count(-1);
      release();
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
    const final = failure === 'stalled' || error instanceof UnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? JOB_CATALOG['run-turn'].attempts);
    const turnId = (job.data as { turnId?: string }).turnId;
    deps.logger.warn({ turnId, jobId: job.id, err: error, final }, 'turn job failed');
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
      .then((ended) => ended && logTurnEnd(deps.logger.child({ conversationId: ended.conversationId, turnId }), ended))
      .catch((endError: unknown) => deps.logger.error({ err: endError, turnId }, 'could not mark the turn failed'));
  });
  // A worker that lost its lock must stop writing: another worker may own the turn now.
  worker.on('lockRenewalFailed', (jobIds) => {
    for (const jobId of jobIds) worker.cancelJob(jobId, 'lock lost');
  });
  worker.on('error', (error) => deps.logger.error({ err: error, queue: queueName }, 'turn worker error'));
  return worker;
}
