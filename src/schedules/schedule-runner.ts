import { AppError } from '../errors/app-error';
import type { Logger } from 'pino';
import type { ConversationsRepository } from '../store/conversations-repository';
import type { TurnsRepository } from '../store/turns-repository';
import type { TurnService } from '../turns/turn-service';
import type { OnBusy } from '../turns/turn-admission';
import { decideTicks, planOf } from './schedule-ticks';
import type { Schedule, ScheduleRun, SchedulesRepository } from './store/schedules-repository';

export interface ScheduleRunnerDeps {
  schedules: SchedulesRepository;
  conversations: Pick<ConversationsRepository, 'findOrCreateByExternalId'>;
  turns: Pick<TurnsRepository, 'activeTurns'>;
  turnService: Pick<TurnService, 'create'>;
  logger: Logger;
}

/** Schedules claimed per pass; a full pass is followed by the next at once (schedule-ticker.ts). */
export const SCHEDULES_PER_PASS = 20;
/**
 * How long a worker's claim on a due schedule lasts, renewed every CLAIM_RENEW_MS while its pass
 * goes on: a worker that dies with a claim leaves its ticks to another within this (the run comes
 * that much late, never twice: the run row is unique).
 */
export const CLAIM_LEASE_MS = 5_000;
export const CLAIM_RENEW_MS = 1_500;

/**
 * Makes schedules' runs: each run a turn admitted like any other (limits, budgets, onBusy), its
 * run row written in the transaction that records the turn, unique on (schedule, tick).
 */
export class ScheduleRunner {
  constructor(private readonly deps: ScheduleRunnerDeps) {}

  /**
   * One pass: the due schedules this worker claims (see SchedulesRepository.claimDue), each one's
   * ticks decided and run, then the schedule moved on. No transaction is held while a run is
   * admitted: the embedded database has one connection. The claims of the schedules not handled
   * yet are renewed meanwhile, so a slow pass keeps them and a dead worker's lapse soon.
   */
  async fireDue(now: Date): Promise<number> {
    const due = await this.deps.schedules.claimDue(now, SCHEDULES_PER_PASS, CLAIM_LEASE_MS);
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
      for (const schedule of due) {
        await this.fire(schedule, now);
        held.delete(schedule.id);
      }
    } finally {
      clearInterval(renewal);
    }
    return due.length;
  }

  private async fire(schedule: Schedule, now: Date): Promise<void> {
    const claimed = schedule.nextRunAt!;
    const decision = decideTicks({ plan: planOf(schedule), nextRunAt: claimed, endAt: schedule.endAt, catchUp: schedule.catchUp, now });
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
      for (const tick of decision.runs) await this.run(schedule, tick);
      await this.deps.schedules.advance(schedule.id, claimed, decision.nextRunAt);
    } catch (error) {
      // Left claimed: the ticks are tried again once the lease ends; their run rows keep each to one run.
      this.deps.logger.warn({ err: error, scheduleId: schedule.id }, 'schedule tick not run; tried again after its claim lapses');
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
    const onBusy = await this.onBusy(schedule, scheduledFor);
    if (onBusy.refusal) return this.record(schedule, scheduledFor, 'skipped', onBusy.refusal);
    try {
      const conversationId = schedule.conversationId ?? (await this.newConversation(schedule, scheduledFor));
      const agent = schedule.agentId && schedule.conversationId ? { agentId: schedule.agentId, agentVersion: schedule.agentVersion } : undefined;
      await this.deps.turnService.create(schedule.userId, conversationId, {
        content: schedule.content,
        idempotencyKey: `schedule:${schedule.id}:${scheduledFor.toISOString()}`,
        onBusy: onBusy.onBusy,
        options: {},
        ...(agent ? { agent } : {}),
        alongside: (tx, turn) => this.deps.schedules.insertStartedRun(schedule.id, { scheduledFor, turnId: turn.id, conversationId }, tx),
      });
    } catch (error) {
      // The turn and its run are recorded, the queue did not answer: the reconciler enqueues the
      // turn once Redis is back, and the tick is done.
      if (AppError.isInstance(error) && error.code === 'unavailable') {
        const recorded = await this.deps.schedules.runFor(schedule.id, scheduledFor);
        if (recorded) return recorded;
      }
      // Refused by admission (limits, a budget, a busy conversation): recorded with the reason.
      if (!AppError.isInstance(error) || error.code === 'internal' || error.code === 'unavailable') throw error;
      return this.record(schedule, scheduledFor, 'refused', `${error.code}: ${error.message}`);
    }
    return (await this.deps.schedules.runFor(schedule.id, scheduledFor))!;
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

  private async record(schedule: Schedule, scheduledFor: Date, status: 'skipped' | 'refused', reason: string): Promise<ScheduleRun> {
    await this.deps.schedules.insertRun(schedule.id, { scheduledFor, status, turnId: null, conversationId: schedule.conversationId, reason });
    return (await this.deps.schedules.runFor(schedule.id, scheduledFor))!;
  }
}
