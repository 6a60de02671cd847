import { AppError } from '../errors/app-error';
import type { Logger } from 'pino';
import type { ConversationsRepository } from '../store/conversations-repository';
import type { TurnsRepository } from '../store/turns-repository';
import type { TurnService } from '../turns/turn-service';
import type { OnBusy } from '../turns/turn-admission';
import { decideTicks, planOf, type TickDecision } from './schedule-ticks';
import { newRunId, type Schedule, type ScheduleRun, type SchedulesRepository } from './store/schedules-repository';

export interface ScheduleRunnerDeps {
  schedules: SchedulesRepository;
  conversations: Pick<ConversationsRepository, 'findOrCreateByExternalId'>;
  turns: Pick<TurnsRepository, 'activeTurns'>;
  turnService: Pick<TurnService, 'create'>;
  logger: Logger;
  /**
   * Schedules of a pass fired at once. Default FIRE_CONCURRENCY; 1 on the embedded database,
   * whose one connection serves its callers in turn whatever their number.
   */
  concurrency?: number;
}

/**
 * Schedules claimed per pass at most; a pass that claimed any is followed by the next at once
 * (schedule-ticker.ts), so a busy worker's passes are as large as what came due during the one
 * before. 100: a backlog (the worker's start, a claim taken over) is taken a second's worth of
 * 1,000 schedules `every: "10s"` at a time.
 */
export const SCHEDULES_PER_PASS = 100;
/**
 * Schedules fired at once within a pass, each a few round trips that mostly wait on PostgreSQL:
 * one after another, one worker admitted 50-60 runs a second (bench/RESULTS.md). At most half
 * the pool (start-worker.ts, DATABASE_POOL_SIZE default 20): the turns this worker runs need
 * the rest.
 */
export const FIRE_CONCURRENCY = 10;
/**
 * How long a worker's claim on a due schedule lasts, renewed every CLAIM_RENEW_MS while its pass
 * goes on: a worker that dies with a claim leaves its ticks to another within this (the run comes
 * that much late, never twice: the run row is unique).
 */
export const CLAIM_LEASE_MS = 5_000;
export const CLAIM_RENEW_MS = 1_500;

type Tick = { scheduleId: string; scheduledFor: Date };
const tickKey = (tick: Tick) => `${tick.scheduleId}@${tick.scheduledFor.getTime()}`;

/**
 * Makes schedules' runs: each run a turn admitted like any other (limits, budgets, onBusy), its
 * run row written in the statement or transaction that records the turn, unique on (schedule,
 * tick).
 */
export class ScheduleRunner {
  constructor(private readonly deps: ScheduleRunnerDeps) {}

  /**
   * One pass: the due schedules this worker claims (see SchedulesRepository.claimDue), each one's
   * ticks decided and run, then the schedules moved on together. No transaction is held while a
   * run is admitted: the embedded database has one connection. The claims of the schedules not
   * moved on yet are renewed meanwhile, so a slow pass keeps them and a dead worker's lapse soon.
   *
   * The pass's schedules fire `concurrency` at once, which keeps each guarantee: a schedule is in
   * one lane only, and its ticks run in their order there; schedules of one conversation share a
   * lane, so each one's onBusy sees the turn the one before it made, as one after another. One
   * run per tick rests on the run row alone (unique on schedule and tick, written with the turn):
   * the ticks read up front as having a run are passed over, one that gets its run meanwhile (a
   * claim that lapsed) fails its own admission, and the turn with it (see {@link run}).
   */
  async fireDue(now: Date): Promise<{ claimed: number; nextDueAt: Date | null }> {
    const { due, nextDueAt } = await this.deps.schedules.claimDue(now, SCHEDULES_PER_PASS, CLAIM_LEASE_MS);
    if (due.length === 0) return { claimed: 0, nextDueAt };
    const held = new Map(due.map((schedule) => [schedule.id, schedule.nextRunAt!]));
    // The pass's clock moved on by the time elapsed (`now` may be a test's).
    const startedAt = Date.now();
    const renewal = setInterval(() => {
      if (held.size === 0) return;
      this.deps.schedules
        .renewClaims(
          [...held].map(([id, nextRunAt]) => ({ id, nextRunAt })),
          new Date(now.getTime() + Date.now() - startedAt),
          CLAIM_LEASE_MS,
        )
        .catch((error: unknown) => {
          this.deps.logger.warn({ err: error }, 'schedule claims not renewed; another worker may take their ticks too (one run each still)');
        });
    }, CLAIM_RENEW_MS);
    try {
      const decided = due.map((schedule) => ({
        schedule,
        decision: decideTicks({ plan: planOf(schedule), nextRunAt: schedule.nextRunAt!, endAt: schedule.endAt, catchUp: schedule.catchUp, now }),
      }));
      const ran = new Set(
        (
          await this.deps.schedules.ticksWithRuns(decided.flatMap(({ schedule, decision }) => decision.runs.map((scheduledFor) => ({ scheduleId: schedule.id, scheduledFor }))))
        ).map(tickKey),
      );
      const moves: { id: string; claimedRunAt: Date; nextRunAt: Date | null }[] = [];
      const lanes = lanesOf(decided);
      const concurrency = this.deps.concurrency ?? FIRE_CONCURRENCY;
      await Promise.all(
        Array.from({ length: Math.min(concurrency, lanes.length) }, async () => {
          for (let lane = lanes.shift(); lane; lane = lanes.shift()) {
            for (const { schedule, decision } of lane) {
              if (await this.fire(schedule, decision, ran)) moves.push({ id: schedule.id, claimedRunAt: schedule.nextRunAt!, nextRunAt: decision.nextRunAt });
            }
          }
        }),
      );
      await this.deps.schedules.advanceAll(moves);
    } finally {
      clearInterval(renewal);
    }
    return { claimed: due.length, nextDueAt };
  }

  /** A schedule's due ticks; false when one was not run (left claimed, tried again once the lease ends). */
  private async fire(schedule: Schedule, decision: TickDecision, ran: Set<string>): Promise<boolean> {
    try {
      for (const skipped of decision.skipped) {
        await this.deps.schedules.insertRun(schedule.id, {
          scheduledFor: skipped,
          status: 'skipped',
          turnId: null,
          conversationId: null,
          reason: 'missed: no worker ran at its time',
        });
      }
      for (const tick of decision.runs) if (!ran.has(tickKey({ scheduleId: schedule.id, scheduledFor: tick }))) await this.admit(schedule, tick);
      return true;
    } catch (error) {
      // Left claimed: the ticks are tried again once the lease ends; their run rows keep each to one run.
      this.deps.logger.warn({ err: error, scheduleId: schedule.id }, 'schedule tick not run; tried again after its claim lapses');
      return false;
    }
  }

  /**
   * The run of one tick (or of a trigger): a turn of the schedule's conversation, or of a new one
   * made for this tick (found again by its externalId when a worker retries the tick). The run
   * that exists already for the tick is answered as it is.
   */
  async run(schedule: Schedule, scheduledFor: Date): Promise<ScheduleRun> {
    const existing = await this.deps.schedules.runFor(schedule.id, scheduledFor);
    if (existing) return existing;
    await this.admit(schedule, scheduledFor);
    return (await this.deps.schedules.runFor(schedule.id, scheduledFor))!;
  }

  /**
   * Admits a tick's turn with its run row, or records why not. Nothing checks first whether the
   * tick has its run (the caller may have): the run row, unique on (schedule, tick), is written
   * in the statement or transaction that records the turn, so a second run of the tick fails and
   * takes its turn back; a new conversation's turn carries the tick's idempotency key too, so a
   * retry finds the turn made before instead of making another.
   */
  private async admit(schedule: Schedule, scheduledFor: Date): Promise<void> {
    const onBusy = await this.onBusy(schedule, scheduledFor);
    if (onBusy.refusal) return this.record(schedule, scheduledFor, 'skipped', onBusy.refusal);
    try {
      const conversationId = schedule.conversationId ?? (await this.newConversation(schedule, scheduledFor));
      const agent = schedule.agentId && schedule.conversationId ? { agentId: schedule.agentId, agentVersion: schedule.agentVersion } : undefined;
      const runId = newRunId();
      await this.deps.turnService.create(schedule.userId, conversationId, {
        content: schedule.content,
        idempotencyKey: `schedule:${schedule.id}:${scheduledFor.toISOString()}`,
        onBusy: onBusy.onBusy,
        options: {},
        ...(agent ? { agent } : {}),
        // The same row on either path of admission: one statement when nothing stands in the
        // turn's way, else the transaction that decides.
        alongsideIfClear: { kind: 'schedule_run', runId, scheduleId: schedule.id, scheduledFor },
        alongside: (tx, turn) => this.deps.schedules.insertStartedRun(schedule.id, { runId, scheduledFor, turnId: turn.id, conversationId }, tx),
      });
    } catch (error) {
      // The turn and its run are recorded, the queue did not answer: the reconciler enqueues the
      // turn once Redis is back, and the tick is done.
      if (AppError.isInstance(error) && error.code === 'unavailable' && (await this.deps.schedules.runFor(schedule.id, scheduledFor))) return;
      // Refused by admission (limits, a budget, a busy conversation): recorded with the reason.
      if (!AppError.isInstance(error) || error.code === 'internal' || error.code === 'unavailable') throw error;
      return this.record(schedule, scheduledFor, 'refused', `${error.code}: ${error.message}`);
    }
  }

  private async onBusy(schedule: Schedule, scheduledFor: Date): Promise<{ onBusy: OnBusy; refusal?: string }> {
    if (!schedule.conversationId) return { onBusy: 'reject' };
    const active = await this.deps.turns.activeTurns(schedule.conversationId);
    if (active.length === 0) return { onBusy: 'reject' };
    switch (schedule.overlap) {
      case 'skip':
        return { onBusy: 'reject', refusal: `a turn is active on the conversation (${active[0]!.id})` };
      case 'enqueue':
        // At most one queued run per schedule: one turn running and this one waiting behind it.
        return active.length > 1 ? { onBusy: 'enqueue', refusal: 'a run is queued already behind the active turn' } : { onBusy: 'enqueue' };
      case 'interrupt':
        this.deps.logger.info({ scheduleId: schedule.id, scheduledFor }, 'schedule run interrupts the active turn');
        return { onBusy: 'interrupt' };
    }
  }

  private async newConversation(schedule: Schedule, scheduledFor: Date): Promise<string> {
    const conversation = await this.deps.conversations.findOrCreateByExternalId(schedule.userId, `schedule:${schedule.id}:${scheduledFor.toISOString()}`, {
      title: `schedule ${schedule.id} at ${scheduledFor.toISOString()}`,
      source: 'schedule',
      metadata: { ...schedule.metadata, scheduleId: schedule.id },
      ...(schedule.agentId ? { agent: { agentId: schedule.agentId, agentVersion: schedule.agentVersion } } : {}),
    });
    return conversation.id;
  }

  private async record(schedule: Schedule, scheduledFor: Date, status: 'skipped' | 'refused', reason: string): Promise<void> {
    await this.deps.schedules.insertRun(schedule.id, { scheduledFor, status, turnId: null, conversationId: schedule.conversationId, reason });
  }
}

/** The pass's schedules by lane: those of one conversation together, in their order; each of the rest alone. */
function lanesOf<T extends { schedule: Schedule }>(decided: T[]): T[][] {
  const lanes = new Map<string, T[]>();
  for (const each of decided) {
    const key = each.schedule.conversationId ?? each.schedule.id;
    const lane = lanes.get(key);
    if (lane) lane.push(each);
    else lanes.set(key, [each]);
  }
  return [...lanes.values()];
}
