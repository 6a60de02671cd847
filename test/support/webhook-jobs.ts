import { EventEmitter } from 'node:events';
import { QueueEvents } from 'bullmq';
import { WEBHOOK_QUEUE } from '../../src/queue/webhook-queue';
import type { TestStack } from './stack';

/**
 * The delivery jobs of a stack as they finish (BullMQ's queue events, read from the start of
 * the stream, so a job finished before the wait began still counts): a test waits for a
 * delivery's job to be done instead of polling its log.
 */
export class WebhookJobs {
  private readonly completions = new Map<string, number>();
  private readonly changes = new EventEmitter();

  private constructor(private readonly events: QueueEvents) {
    events.on('completed', ({ jobId }) => {
      // A redelivery's job is `<deliveryId>.<redeliveredAt>` (queue/webhook-queue.ts): counted as its delivery's.
      const deliveryId = jobId.split('.')[0]!;
      this.completions.set(deliveryId, (this.completions.get(deliveryId) ?? 0) + 1);
      this.changes.emit('completed');
    });
  }

  static async follow(stack: TestStack): Promise<WebhookJobs> {
    const events = new QueueEvents(WEBHOOK_QUEUE, { connection: { url: stack.config.REDIS_URL! }, prefix: stack.resources.queuePrefix, lastEventId: '0-0' });
    await events.waitUntilReady();
    return new WebhookJobs(events);
  }

  /** Resolves once the delivery's jobs have completed `times` times (a redelivery runs it again). */
  completed(deliveryId: string, times = 1, timeoutMs = 30_000): Promise<void> {
    if ((this.completions.get(deliveryId) ?? 0) >= times) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.changes.off('completed', check);
        reject(new Error(`delivery job ${deliveryId} did not complete ${times} time(s) within ${timeoutMs} ms`));
      }, timeoutMs);
      const check = () => {
        if ((this.completions.get(deliveryId) ?? 0) < times) return;
        clearTimeout(timer);
        this.changes.off('completed', check);
        resolve();
      };
      this.changes.on('completed', check);
    });
  }

  close(): Promise<void> {
    return this.events.close();
  }
}
