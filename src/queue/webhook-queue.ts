import { Queue, type ConnectionOptions } from 'bullmq';
import { jobOptions, WEBHOOK_QUEUE, type JobPayload } from './job-catalog';

export { WEBHOOK_QUEUE } from './job-catalog';

/** One run of a delivery: from its event, or from the redeliver at `redeliveredAt`. */
export interface DeliveryRun {
  id: string;
  redeliveredAt: Date | null;
}

/**
 * A run's job id: the delivery's for the event's run, `<deliveryId>.<redeliveredAt ms>` for a
 * redeliver's. A redelivery thus gets a job of its own even while the previous run's job is
 * active, or done but not yet removed: with one id it would be dropped as a duplicate, and the
 * redelivery would wait for the relay's sweep.
 */
export const deliveryJobId = (run: DeliveryRun): string => (run.redeliveredAt ? `${run.id}.${run.redeliveredAt.getTime()}` : run.id);

export function createWebhookQueue(connection: ConnectionOptions, prefix: string): Queue {
  return new Queue(WEBHOOK_QUEUE, { connection, prefix });
}

/** Adds the run's job unless it has one; `delayMs` until its next attempt. */
export async function enqueueDelivery(queue: Queue, run: DeliveryRun, delayMs = 0): Promise<void> {
  await enqueueDeliveries(queue, [{ run, delayMs }]);
}

/** Adds the jobs of several runs in one round trip; each is skipped when it already has one. */
export async function enqueueDeliveries(queue: Queue, runs: { run: DeliveryRun; delayMs: number }[]): Promise<void> {
  if (runs.length === 0) return;
  await queue.addBulk(
    runs.map(({ run, delayMs }) => ({
      name: 'deliver',
      data: { deliveryId: run.id, redeliveredAt: run.redeliveredAt?.getTime() ?? null } satisfies JobPayload<'deliver'>,
      opts: jobOptions('deliver', { jobId: deliveryJobId(run), ...(delayMs > 0 ? { delay: delayMs } : {}) }),
    })),
  );
}

/** The delay of a job whose attempt is due at `at` (none when it is due already, or unset). */
export const delayUntil = (at: Date | null): number => (at ? Math.max(0, at.getTime() - Date.now()) : 0);

/** Whether the run still has a job in Redis (a Redis that came back empty has none). */
export async function hasDeliveryJob(queue: Queue, run: DeliveryRun): Promise<boolean> {
  return (await queue.getJob(deliveryJobId(run))) !== undefined;
}
