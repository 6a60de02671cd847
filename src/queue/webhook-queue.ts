import { Queue, type ConnectionOptions } from 'bullmq';
import { z } from 'zod';

export const WEBHOOK_QUEUE = 'webhooks';

/** Ids only: the delivery's body and state live in PostgreSQL (webhook_deliveries). */
export const webhookJobSchema = z.object({ deliveryId: z.string() });
export type WebhookJobData = z.infer<typeof webhookJobSchema>;

/**
 * The job's own attempts are Switchyard's (a store away longer than a job waits); the
 * receiver's retries are the delivery's, scheduled by the job itself (webhooks/webhook-worker.ts,
 * which moves it back to delayed until the attempt webhooks/webhook-delivery.ts decided).
 * Removed once done either way: PostgreSQL keeps the record, and a redelivery or the relay can
 * add a job of the same id again.
 */
const JOB_OPTIONS = { attempts: 5, backoff: { type: 'exponential', delay: 1000 }, removeOnComplete: true, removeOnFail: true } as const;

export function createWebhookQueue(connection: ConnectionOptions, prefix: string): Queue {
  return new Queue(WEBHOOK_QUEUE, { connection, prefix });
}

/** Adds the delivery's job unless it has one (its id is the delivery's); `delayMs` until its next attempt. */
export async function enqueueDelivery(queue: Queue, deliveryId: string, delayMs = 0): Promise<void> {
  await enqueueDeliveries(queue, [{ id: deliveryId, delayMs }]);
}

/** Adds the jobs of several deliveries in one round trip; each is skipped when it already has one. */
export async function enqueueDeliveries(queue: Queue, deliveries: { id: string; delayMs: number }[]): Promise<void> {
  if (deliveries.length === 0) return;
  await queue.addBulk(
    deliveries.map(({ id, delayMs }) => ({
      name: 'deliver',
      data: { deliveryId: id } satisfies WebhookJobData,
      opts: { ...JOB_OPTIONS, jobId: id, ...(delayMs > 0 ? { delay: delayMs } : {}) },
    })),
  );
}

/** Whether the delivery still has a job in Redis (a Redis that came back empty has none). */
export async function hasDeliveryJob(queue: Queue, deliveryId: string): Promise<boolean> {
  return (await queue.getJob(deliveryId)) !== undefined;
}

/** The delivery's job, run now: added, or brought forward when it waits for a later attempt. */
export async function deliverNow(queue: Queue, deliveryId: string): Promise<void> {
  await enqueueDelivery(queue, deliveryId);
  const job = await queue.getJob(deliveryId);
  if (job && (await job.isDelayed())) await job.promote().catch(() => undefined);
}
