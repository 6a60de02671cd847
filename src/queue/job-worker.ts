import type { ConnectionOptions, Job, Worker } from 'bullmq';
import { queuePayloads, type QueueName, type QueuePayload } from './job-catalog';
import { jobFailure, toJobFailure } from './job-failure';
import { LockKeepingWorker } from './lock-keeping-worker';

/** How a worker process takes jobs from one of our queues (README, "Settings that matter"). */
export interface JobWorkerSettings {
  connection: ConnectionOptions;
  prefix: string;
  concurrency: number;
  lockDurationMs: number;
  stalledIntervalMs: number;
  /** Lock losses a job survives before it fails as stalled. */
  maxStalledCount: number;
}

/**
 * A BullMQ worker of one of the catalog's queues: it hands `processJob` each job's data parsed
 * with the queue's payload (a job that does not parse fails for good, `malformed_job`), and its
 * processor fails only with the coded errors of job-failure.ts.
 */
export function createJobWorker<Name extends QueueName>(
  queueName: Name,
  settings: JobWorkerSettings,
  processJob: (job: Job, payload: QueuePayload<Name>, token?: string, signal?: AbortSignal) => Promise<void>,
): Worker {
  const payloadSchema = queuePayloads[queueName];
  const worker: LockKeepingWorker = new LockKeepingWorker(
    queueName,
    async (job: Job, token?: string, signal?: AbortSignal) => {
      // Counted in first, before any await: the run is inside from the moment BullMQ tracks its lock.
      const leave = worker.enterRun(job.id!);
      try {
        const parsed = payloadSchema.safeParse(job.data);
        if (!parsed.success) throw jobFailure('malformed_job', parsed.error);
        await processJob(job, parsed.data as QueuePayload<Name>, token, signal).catch((error: unknown) => {
          throw toJobFailure(error);
        });
      } finally {
        leave();
      }
    },
    {
      connection: settings.connection,
      prefix: settings.prefix,
      concurrency: settings.concurrency,
      lockDuration: settings.lockDurationMs,
      stalledInterval: settings.stalledIntervalMs,
      maxStalledCount: settings.maxStalledCount,
    },
  );
  return worker;
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
