import { DelayedError, type Job } from 'bullmq';
import { closeJobWorkers, createJobWorker, type JobWorkerSettings } from '../queue/job-worker';
import { WEBHOOK_QUEUE } from '../queue/job-catalog';
import { attemptDelivery, type WebhookDeliveryDeps } from './webhook-delivery';

/**
 * Runs delivery jobs. A delivery is one job for all its attempts: a failed attempt moves the
 * job back to delayed until its next attempt (BullMQ keeps it in Redis, so it survives the
 * worker), and the delivery row says when that is (the relay re-adds a job Redis lost). A run
 * whose endpoint has no free slot here waits the same way, briefly, without an attempt: BullMQ
 * does not count such waits as the job's attempts.
 * Closing it closes its kept-alive connections to receivers once the running attempts end.
 */
export function startWebhookWorker(settings: JobWorkerSettings, deps: WebhookDeliveryDeps): { close(graceMs: number): Promise<void> } {
  const worker = createJobWorker(WEBHOOK_QUEUE, settings, async (job: Job, run, token?: string) => {
    const next = await attemptDelivery(deps, run);
    if (next.kind === 'done') return;
    await job.moveToDelayed(next.at.getTime(), token);
    throw new DelayedError();
  });
  worker.on('error', (error) => deps.logger.debug({ err: error }, 'webhook worker error'));
  return {
    async close(graceMs) {
      await closeJobWorkers([worker], graceMs);
      await deps.connections.close();
    },
  };
}
