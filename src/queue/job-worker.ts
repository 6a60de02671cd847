import { Worker, type ConnectionOptions, type Job } from 'bullmq';
import { toJobFailure } from './job-failure';

/** How a worker process takes jobs from one of our queues (README, "Lock and stall settings"). */
export interface JobWorkerSettings {
  connection: ConnectionOptions;
  prefix: string;
  concurrency: number;
  lockDurationMs: number;
  stalledIntervalMs: number;
  /** Lock losses a job survives before it fails as stalled. */
  maxStalledCount: number;
}

/** A BullMQ worker whose processor fails only with the coded errors of job-failure.ts. */
export function createJobWorker(
  queueName: string,
  settings: JobWorkerSettings,
  processJob: (job: Job, token?: string, signal?: AbortSignal) => Promise<void>,
): Worker {
  return new Worker(
    queueName,
    (job: Job, token?: string, signal?: AbortSignal) =>
      processJob(job, token, signal).catch((error: unknown) => {
        throw toJobFailure(error);
      }),
    {
      connection: settings.connection,
      prefix: settings.prefix,
      concurrency: settings.concurrency,
      lockDuration: settings.lockDurationMs,
      stalledInterval: settings.stalledIntervalMs,
      maxStalledCount: settings.maxStalledCount,
    },
  );
}

/**
 * Closes the workers: `worker.close()` waits for active jobs with no limit of its own, so past
 * the grace period the active jobs are cancelled and handed back to the queue.
 */
export async function closeJobWorkers(workers: Worker[], graceMs: number): Promise<void> {
  const timer = setTimeout(() => workers.forEach((worker) => worker.cancelAllJobs('shutdown')), graceMs);
  try {
    await Promise.all(workers.map((worker) => worker.close()));
  } finally {
    clearTimeout(timer);
  }
}
