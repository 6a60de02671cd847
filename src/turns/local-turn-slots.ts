import { randomUUID } from 'node:crypto';
import type { Job, Queue } from 'bullmq';
import type { Logger } from 'pino';
import type { Metrics } from '../metrics/metrics';
import type { TurnCancellations } from '../queue/turn-cancellations';
import { enqueueTurn, fairPriority } from '../queue/turn-queue';
import type { RedisClient } from '../redis/redis-connection';
import type { AdmittedTurn } from './turn-hand-off';
import { runTurnJob } from './turn-job-run';
import type { TurnRunnerDeps, TurnRunOutcome } from './turn-runner';
import type { QueueTurnSlots } from './turn-worker';

export interface LocalTurnSlotsDeps {
  runner: TurnRunnerDeps;
  turnQueue: Queue;
  /** This process's cancel signals: a cancelled turn's local run is aborted. */
  cancellations: TurnCancellations;
  /** The interactive BullMQ worker of this process, whose slots these share. */
  queueSlots: QueueTurnSlots;
  redis: RedisClient;
  redisPrefix: string;
  metrics: Pick<Metrics, 'turnStarts'>;
  logger: Logger;
  /** The clock the leases are read with (tests). */
  now?: () => number;
}

export interface LocalTurnSlotsSettings {
  /** The process's interactive turn slots (WORKER_CONCURRENCY), shared with its BullMQ worker. */
  slots: number;
  /** How long a local run's lease lasts unrenewed (LOCK_DURATION_MS); it is renewed every half of it. */
  leaseMs: number;
}

const CANCELLED = 'cancelled';
const LEASE_LOST = 'lock lost';
const SHUTDOWN = 'shutdown';
/** A run that threw leaves its job to BullMQ after this, as a failed job's first backoff. */
const FAILED_RUN_RETRY_MS = 1000;
/** BullMQ's codes (`error.code`) for a job that is gone, or no longer delayed. */
const LEASE_GONE = new Set([-1, -3]);

/**
 * Turns this process's API has just admitted start here at once, in a free interactive turn
 * slot, instead of waiting for BullMQ to hand their job to a worker: a process that is both API
 * and worker (the all-in-one) saves the job's pick-up. The job is still added, before the run
 * starts, for durability, but *delayed* by a lease (LOCK_DURATION_MS) that the run keeps
 * extending (`changeDelay`, every half lease) while it lives, so no worker anywhere can take it:
 *
 * 1. A run that ends removes the job (a completed turn job is removed at once anyway); one that
 *    must wait (a provider's retry) sets the delay to the wait; one stopped by a shutdown
 *    promotes it, so another worker takes the turn from its last committed step at once.
 * 2. A process that dies stops extending it: the delay lapses, the job becomes waiting, and any
 *    worker takes it; its fenced take (`beginAttempt`, the same job id) takes the turn over as for
 *    a stalled job, the dead run's writes refused from then on.
 * 3. A renewal that finds the job gone or no longer delayed (the lease lapsed while this process
 *    was stalled or cut off) aborts the run as a lost lock does, and the job is left alone.
 *
 * The job is touched at a run's end only while the lease is surely still held (renewed less
 * than three quarters of a lease ago); otherwise it is left to lapse, and the worker that takes
 * it finds the turn as the run left it (finished: it skips; not: it goes on).
 */
export class LocalTurnSlots {
  private local = 0;
  private closing = false;
  private readonly runs = new Map<string, { controller: AbortController; done: Promise<void> }>();
  private readonly now: () => number;

  constructor(
    private readonly deps: LocalTurnSlotsDeps,
    private readonly settings: LocalTurnSlotsSettings,
  ) {
    this.now = deps.now ?? Date.now;
  }

  /**
   * Starts an interactive turn just admitted here, if a slot is free (keeping one for the
   * BullMQ worker); false leaves it to be enqueued as usual. Throws as an enqueue does when its
   * job could not be added (the turn is recorded; the reconciler enqueues it).
   */
  readonly start = async (turn: AdmittedTurn): Promise<boolean> => {
    if (this.closing || turn.batchPriority !== null || turn.retryAt !== null) return false;
    if (!this.hasFreeSlot()) {
      this.deps.metrics.turnStarts.inc({ path: 'queue' });
      return false;
    }
    this.take();
    let job: Job;
    let addedAt: number;
    try {
      const active = turn.activeTurnsOfUser ?? (await this.deps.runner.turns.countActiveForUser(turn.userId));
      addedAt = this.now();
      job = await enqueueTurn(this.deps.turnQueue, turn, fairPriority(active), this.settings.leaseMs);
    } catch (error) {
      this.give();
      throw error;
    }
    this.deps.metrics.turnStarts.inc({ path: 'local' });
    const controller = new AbortController();
    const done = this.run(turn, job, addedAt, controller)
      .catch((error: unknown) => this.deps.logger.error({ err: error, turnId: turn.id }, 'local turn run failed'))
      .finally(() => {
        this.runs.delete(turn.id);
        this.give();
      });
    this.runs.set(turn.id, { controller, done });
    return true;
  };

  /** Stops taking turns, waits for the local runs up to `graceMs`, then stops them, each handing its job back. */
  async close(graceMs: number): Promise<void> {
    this.closing = true;
    const runs = [...this.runs.values()];
    const timer = setTimeout(() => runs.forEach((run) => run.controller.abort(SHUTDOWN)), graceMs);
    try {
      await Promise.all(runs.map((run) => run.done));
    } finally {
      clearTimeout(timer);
    }
  }

  /** A free slot, and at least one left for the BullMQ worker (which continuations and other processes' turns need). */
  private hasFreeSlot(): boolean {
    const after = this.local + 1;
    return after < this.settings.slots && this.deps.queueSlots.running() + after <= this.settings.slots;
  }

  private take(): void {
    this.local++;
    this.deps.queueSlots.setConcurrency(this.settings.slots - this.local);
  }

  private give(): void {
    this.local--;
    this.deps.queueSlots.setConcurrency(this.settings.slots - this.local);
  }

  private async run(turn: AdmittedTurn, job: Job, addedAt: number, controller: AbortController): Promise<void> {
    const { runner, cancellations } = this.deps;
    // Of this run alone: the calls of a step run here are held by it (local-tool-slots.ts), and
    // the worker that takes the job over after a lapse holds them by its own BullMQ lock.
    const lease = new DelayLease(job, {
      redis: this.deps.redis,
      delayedKey: this.deps.turnQueue.toKey('delayed'),
      key: `${this.deps.redisPrefix}:local-turn:${job.id!}:${randomUUID()}`,
      leaseMs: this.settings.leaseMs,
      validFrom: addedAt,
      now: this.now,
      onLost: () => controller.abort(LEASE_LOST),
    });
    const release = cancellations.register(turn.id, () => controller.abort(CANCELLED));
    let result: { outcome: TurnRunOutcome } | { error: unknown };
    try {
      const run = { turnId: turn.id, conversationId: turn.conversationId, traceparent: turn.traceparent ?? undefined, jobId: job.id!, jobName: job.name };
      result = { outcome: await runTurnJob(runner, { ...run, lockKey: lease.key, handedOff: true }, controller.signal) };
    } catch (error) {
      result = { error };
    } finally {
      release();
    }
    await lease.stop();
    try {
      await this.settle(job, lease, result, controller.signal);
    } finally {
      await lease.forget();
    }
  }

  /** What becomes of the job, as turn-worker.ts decides for a delivered one. */
  private async settle(job: Job, lease: DelayLease, result: { outcome: TurnRunOutcome } | { error: unknown }, signal: AbortSignal): Promise<void> {
    const log = this.deps.logger.child({ turnId: (job.data as { turnId: string }).turnId, jobId: job.id });
    // Perhaps lapsed: a worker may hold the job, or will; whatever it finds, it is right.
    if (!lease.held()) return log.debug('local turn run ended without its lease; its job is left to the queue');
    try {
      if ('error' in result) {
        log.warn({ err: result.error }, 'local turn run failed; its job runs again from the queue');
        return await job.changeDelay(FAILED_RUN_RETRY_MS);
      }
      // A shutdown hands the unfinished turn back at once; a cancel ended it (the job is done).
      if (signal.aborted && signal.reason !== CANCELLED) return await job.promote();
      if (result.outcome.kind === 'delay') return await job.changeDelay(result.outcome.delayMs);
      if (result.outcome.kind === 'skipped') log.debug({ reason: result.outcome.reason }, 'turn job skipped');
      await job.remove();
    } catch (error) {
      // Left delayed by the lease: it lapses, and the worker that takes it finds the turn as it is.
      log.warn({ err: error }, 'could not settle a local turn run its job; the queue will');
    }
  }
}

/**
 * A delayed job held as a lease: the delay is pushed on every half lease, and a Redis key of
 * the holder's (what a step's local calls are held by) lives as long.
 */
class DelayLease {
  readonly key: string;
  private validUntil: number;
  private lost = false;
  private renewing: Promise<void> | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(
    private readonly job: Job,
    private readonly options: { redis: RedisClient; delayedKey: string; key: string; leaseMs: number; validFrom: number; now: () => number; onLost: () => void },
  ) {
    this.key = options.key;
    this.validUntil = options.validFrom + options.leaseMs;
    const { redis, leaseMs } = options;
    // The job added may not be this lease's: a job of the same id added just before (the
    // reconciler's, for a turn it saw queued without one) is not delayed, and a worker may run it.
    void Promise.all([redis.set(this.key, '1', 'PX', leaseMs), redis.zscore(options.delayedKey, job.id!)])
      .then(([, score]) => score === null && this.lose())
      .catch(() => undefined);
    this.timer = setInterval(
      () => {
        this.renewing ??= this.renew().finally(() => (this.renewing = undefined));
      },
      Math.ceil(leaseMs / 2),
    );
    this.timer.unref();
  }

  /** Held for sure: renewed less than three quarters of a lease ago (a quarter for the clocks of other processes), never found lost. */
  held(): boolean {
    return !this.lost && this.options.now() < this.validUntil - this.options.leaseMs / 4;
  }

  /** No more renewals (the one under way finishes first). */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.renewing;
  }

  /** Drops the holder's key: the run is over. */
  async forget(): Promise<void> {
    await this.options.redis.del(this.key).catch(() => undefined);
  }

  private async renew(): Promise<void> {
    const { redis, leaseMs, now } = this.options;
    const sentAt = now();
    try {
      await Promise.all([this.job.changeDelay(leaseMs), redis.set(this.key, '1', 'PX', leaseMs)]);
      this.validUntil = sentAt + leaseMs;
    } catch (error) {
      // Anything else (Redis away) is tried again next time. Should the lease lapse meanwhile and
      // another worker take the job, its take fences this run's writes, and the next renewal
      // that gets through finds the job no longer delayed.
      if (LEASE_GONE.has((error as { code?: unknown }).code as number)) this.lose();
    }
  }

  private lose(): void {
    if (this.lost) return;
    this.lost = true;
    this.options.onLost();
  }
}
