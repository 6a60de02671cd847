import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import { enqueueDelivery, hasDeliveryJob } from '../queue/webhook-queue';
import type { WebhooksRepository } from '../store/webhooks-repository';

export interface WebhookRelayDeps {
  webhooks: WebhooksRepository;
  webhookQueue: Queue;
  logger: Logger;
}

/** Deliveries handled per pass: a backlog drains over several passes, without one long transaction. */
const BATCH = 500;
/** The sweep for lost jobs runs every this many relay passes (every 30 s by default). */
const SWEEP_EVERY_PASSES = 30;
/** How many passes late a delivery's attempt may be before the sweep looks for its job (15 s by default). */
const OVERDUE_PASSES = 15;

/**
 * Moves recorded webhook events (the outbox rows the end of a turn or batch committed) into
 * delivery jobs, in every worker process:
 * - every pass, pending deliveries with no job yet get one (its id is the delivery's, so two
 *   workers adding it at once add one job), then are marked enqueued;
 * - every SWEEP_EVERY_PASSES passes, pending deliveries whose attempt is overdue get their job
 *   back if Redis lost it (a restart without persistence): within a minute by default.
 * A crash between the commit and the job loses nothing: the next pass, here or in any worker,
 * adds it.
 */
export function startWebhookRelay(deps: WebhookRelayDeps, options: { intervalMs: number }): { stop(): Promise<void> } {
  let stopped = false;
  let passes = 0;
  let running: Promise<void> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;

  const pass = async () => {
    try {
      await relayPass(deps);
      if (passes++ % SWEEP_EVERY_PASSES === 0) await sweepPass(deps, OVERDUE_PASSES * options.intervalMs);
    } catch (error) {
      deps.logger.warn({ err: error }, 'webhook relay pass failed; retrying');
    }
  };
  const schedule = () => {
    if (stopped) return;
    timer = setTimeout(() => {
      running = pass().finally(schedule);
    }, options.intervalMs);
  };
  running = pass().finally(schedule);

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

/** Adds the jobs of recorded deliveries that have none yet; returns how many. */
export async function relayPass(deps: WebhookRelayDeps): Promise<number> {
  const waiting = await deps.webhooks.unenqueued(BATCH);
  for (const delivery of waiting) await enqueueDelivery(deps.webhookQueue, delivery.id, delayUntil(delivery.nextAttemptAt));
  await deps.webhooks.markEnqueued(waiting.map((delivery) => delivery.id));
  return waiting.length;
}

/** Re-adds the jobs Redis no longer has of deliveries still pending. */
async function sweepPass(deps: WebhookRelayDeps, overdueMs: number): Promise<void> {
  for (const delivery of await deps.webhooks.overdue(overdueMs, BATCH)) {
    if (await hasDeliveryJob(deps.webhookQueue, delivery.id)) continue;
    await enqueueDelivery(deps.webhookQueue, delivery.id, delayUntil(delivery.nextAttemptAt));
    deps.logger.info({ deliveryId: delivery.id }, 'webhook delivery job re-added');
  }
}

const delayUntil = (at: Date | null) => (at ? Math.max(0, at.getTime() - Date.now()) : 0);
