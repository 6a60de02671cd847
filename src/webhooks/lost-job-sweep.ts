import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import { delayUntil, enqueueDeliveries, hasDeliveryJob } from '../queue/webhook-queue';
import type { OverdueCursor, WebhooksRepository } from '../store/webhooks-repository';

export interface LostJobSweepDeps {
  webhooks: Pick<WebhooksRepository, 'overdue'>;
  webhookQueue: Queue;
  logger: Logger;
}

/** How the sweep pages: `pageSize` deliveries a statement, at most `maxPages` pages a sweep. */
export interface SweepPaging {
  pageSize: number;
  maxPages: number;
}

/**
 * Gives pending deliveries whose attempt is overdue their job back when Redis lost it (a restart
 * without persistence). Overdue does not mean lost: a delivery whose endpoint had no free slot
 * keeps its job, moved back to delayed, and its `next_attempt_at` stays where it was, so a large
 * backlog holds many overdue deliveries that still have their jobs. The sweep therefore pages
 * through them all rather than rechecking the same first page: each sweep goes on from where the
 * one before stopped, at most `maxPages` pages, and starts over once it reached the end.
 */
export class LostJobSweep {
  private from: OverdueCursor | null = null;

  constructor(
    private readonly deps: LostJobSweepDeps,
    private readonly paging: SweepPaging,
  ) {}

  /** Re-adds the jobs of overdue deliveries that have none; returns how many. */
  async sweep(overdueMs: number): Promise<number> {
    let readded = 0;
    for (let page = 0; page < this.paging.maxPages; page++) {
      const { runs, next } = await this.deps.webhooks.overdue(overdueMs, this.paging.pageSize, this.from);
      const present = await Promise.all(runs.map((run) => hasDeliveryJob(this.deps.webhookQueue, run)));
      const lost = runs.filter((_, index) => !present[index]);
      await enqueueDeliveries(
        this.deps.webhookQueue,
        lost.map((run) => ({ run, delayMs: delayUntil(run.nextAttemptAt) })),
      );
      for (const run of lost) this.deps.logger.info({ deliveryId: run.id }, 'webhook delivery job re-added');
      readded += lost.length;
      // A short page is the end: the next sweep starts from the first again.
      this.from = runs.length < this.paging.pageSize ? null : next;
      if (this.from === null) break;
    }
    return readded;
  }
}
