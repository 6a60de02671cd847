import type { Queue } from 'bullmq';
import type { Logger } from 'pino';
import { delayUntil, enqueueDeliveries } from '../queue/webhook-queue';
import type { ChannelListener, Listening } from '../store/db';
import type { WebhooksRepository } from '../store/webhooks-repository';
import { LostJobSweep, type SweepPaging } from './lost-job-sweep';

export interface WebhookRelayDeps {
  webhooks: Pick<WebhooksRepository, 'unenqueued' | 'markEnqueued' | 'overdue'>;
  webhookQueue: Queue;
  logger: Logger;
  /**
   * Tells `listener` when deliveries were recorded (the commit's notification, migration 0022)
   * until closed; the relay's polls cover whatever it misses.
   */
  wakeups: (listener: ChannelListener) => Listening;
}

/** Deliveries handled per pass: a backlog drains over several passes, without one long transaction. */
const BATCH = 500;
/** A sweep checks up to 20 pages of BATCH overdue deliveries (10,000), and the next goes on from there. */
const SWEEP_PAGING: SweepPaging = { pageSize: BATCH, maxPages: 20 };
/**
 * The wait after a pass that found work, when it is shorter than the interval: events come in
 * runs (a batch, a busy minute), and the next ones are then moments away. Short enough that an
 * event under load waits tens of ms, not half an interval; long enough that a pass still takes
 * several events (a pass costs two statements and a Redis round trip, whatever it carries).
 */
const BUSY_INTERVAL_MS = 100;
/** The sweep for lost jobs runs every this many intervals (every 30 s by default). */
const SWEEP_EVERY_INTERVALS = 30;
/** How many intervals late a delivery's attempt may be before the sweep looks for its job (15 s by default). */
const OVERDUE_INTERVALS = 15;

/**
 * Moves recorded webhook events (the outbox rows the end of a turn or batch committed) into
 * delivery jobs, in every worker process:
 * - every pass, pending deliveries with no job yet get one, all in one Redis round trip (its id
 *   is the delivery run's, so two workers adding it at once add one job), then are marked enqueued;
 *   the next pass comes after `intervalMs`, or BUSY_INTERVAL_MS when this one found work, or at
 *   once when it found more than one pass takes;
 * - while idle (the last pass found nothing), a wakeup (a commit that recorded deliveries) brings
 *   the next pass forward to now, or to the end of the pass running; while busy the next pass is
 *   near anyway, so wakeups change nothing and a run of events still shares a pass. The interval
 *   is then the fallback for a wakeup lost (a dropped listening connection);
 * - every SWEEP_EVERY_INTERVALS intervals, pending deliveries whose attempt is overdue get their
 *   job back if Redis lost it (a restart without persistence): within a minute by default, for
 *   a backlog the sweep pages through over as many sweeps as it takes (lost-job-sweep.ts).
 * A crash between the commit and the job loses nothing: the next pass, here or in any worker,
 * adds it.
 */
export function startWebhookRelay(deps: WebhookRelayDeps, options: { intervalMs: number; /** Default: 20 pages of 500. */ sweepPaging?: SweepPaging }): { stop(): Promise<void> } {
  const sweep = new LostJobSweep(deps, options.sweepPaging ?? SWEEP_PAGING);
  let stopped = false;
  let lastSweepAt = -Infinity;
  let running: Promise<void> | undefined;
  let timer: NodeJS.Timeout | undefined;
  /** The last pass succeeded and found nothing: the next is an interval away, and a wakeup brings it forward. */
  let idle = false;
  let wokenWhileRunning = false;

  /** Runs a pass; returns the wait before the next. */
  const pass = async (): Promise<number> => {
    try {
      const relayed = await relayPass(deps);
      if (performance.now() - lastSweepAt >= SWEEP_EVERY_INTERVALS * options.intervalMs) {
        lastSweepAt = performance.now();
        await sweep.sweep(OVERDUE_INTERVALS * options.intervalMs);
      }
      idle = relayed === 0;
      if (relayed >= BATCH) return 0;
      return relayed > 0 ? Math.min(BUSY_INTERVAL_MS, options.intervalMs) : options.intervalMs;
    } catch (error) {
      deps.logger.warn({ err: error }, 'webhook relay pass failed; retrying');
      idle = false;
      return options.intervalMs;
    }
  };
  const schedule = (waitMs: number) => {
    clearTimeout(timer);
    timer = setTimeout(run, waitMs);
  };
  const run = () => {
    wokenWhileRunning = false;
    running = pass().then((waitMs) => {
      running = undefined;
      // A commit during the pass may have come after its read: look again now rather than in an interval.
      if (!stopped) schedule(wokenWhileRunning && idle ? 0 : waitMs);
    });
  };
  const wake = () => {
    if (stopped) return;
    if (running) wokenWhileRunning = true;
    else if (idle) {
      idle = false;
      schedule(0);
    }
  };
  let deaf = false;
  const wakeups = deps.wakeups({
    notified: wake,
    listening: () => {
      if (deaf) deps.logger.info('webhook relay woken by new deliveries again');
      deaf = false;
      // Deliveries recorded before it listened woke nothing.
      wake();
    },
    lost: (error) => {
      deaf = true;
      deps.logger.warn({ err: error }, `webhook relay not woken by new deliveries until it listens again; it looks every ${options.intervalMs} ms`);
    },
  });
  run();

  return {
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await wakeups.close();
      await running;
    },
  };
}

/** Adds the jobs of recorded deliveries that have none yet; returns how many. */
export async function relayPass(deps: Pick<WebhookRelayDeps, 'webhooks' | 'webhookQueue'>): Promise<number> {
  const waiting = await deps.webhooks.unenqueued(BATCH);
  await enqueueDeliveries(
    deps.webhookQueue,
    waiting.map((delivery) => ({ run: delivery, delayMs: delayUntil(delivery.nextAttemptAt) })),
  );
  await deps.webhooks.markEnqueued(waiting.map((delivery) => delivery.id));
  return waiting.length;
}
