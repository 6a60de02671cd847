import { createHash } from 'node:crypto';
import { AppError, notFound } from '../errors/app-error';
import type { Turn, TurnOptions } from '../store/turns-repository';
import { isTerminal } from '../store/turns-repository';
import { admitTurn, type OnBusy } from './turn-admission';
import { announceTurnEnd, endTurn, recordTurnEnd, type TurnEndingDeps, type TurnOutcome } from './turn-ending';

export interface TurnServiceDeps extends TurnEndingDeps {
  conversations: TurnEndingDeps['conversations'];
  /** Unfinished turns one user may have; more are refused with 429. */
  maxActiveTurnsPerUser: number;
}

const INTERRUPTED: TurnOutcome = { status: 'cancelled', finishReason: 'interrupted' };

export interface TurnRequest {
  content: unknown;
  idempotencyKey?: string;
  onBusy: OnBusy;
  options: TurnOptions;
}

/** The API's side of turns: admission and cancellation. Workers run them (turn-runner.ts). */
export class TurnService {
  constructor(private readonly deps: TurnServiceDeps) {}

  /** `created` is false when an idempotency key replayed an earlier turn. */
  async create(userId: string, conversationId: string, request: TurnRequest): Promise<{ turn: Turn; created: boolean }> {
    const requestHash = hashRequest(request);
    const admission = await this.deps.db.transaction(async (tx) => {
      const conversation = await this.deps.conversations.get(userId, conversationId, tx, true);
      if (!conversation) throw notFound('conversation');
      const existingForKey = request.idempotencyKey
        ? await this.deps.turns.findByIdempotencyKey(conversationId, request.idempotencyKey, tx)
        : null;
      const activeTurns = await this.deps.turns.activeTurns(conversationId, tx);
      const decision = admitTurn({ existingForKey, requestHash, activeTurns, onBusy: request.onBusy });
      if (decision.kind !== 'create') return { decision, turn: null, interrupted: [] as Turn[], activeOfUser: 0 };
      // Counted across the user's conversations without a lock: concurrent posts may pass the
      // limit by a few, which is fine for a limit that protects capacity, not correctness.
      const activeOfUser = await this.deps.turns.countActiveForUser(userId, tx);
      if (activeOfUser >= this.deps.maxActiveTurnsPerUser) {
        throw new AppError('rate_limited', `at most ${this.deps.maxActiveTurnsPerUser} unfinished turns per user; wait for some to finish`, undefined, 5);
      }
      // Ended in the transaction that records the new turn: the conversation never has both
      // active, and a crash cannot leave the new turn recorded with the old one still running.
      const interrupted: Turn[] = [];
      for (const active of decision.interrupt) {
        const ended = await recordTurnEnd(this.deps, active.id, null, INTERRUPTED, tx);
        if (ended) interrupted.push(ended);
      }
      const turn = await this.deps.turns.insert(
        {
          conversationId,
          userId,
          input: request.content,
          options: request.options,
          ...(request.idempotencyKey ? { idempotencyKey: request.idempotencyKey } : {}),
          requestHash,
        },
        tx,
      );
      return { decision, turn, interrupted, activeOfUser: activeOfUser + 1 - interrupted.length };
    });

    const { decision } = admission;
    switch (decision.kind) {
      case 'replay':
        return { turn: decision.turn, created: false };
      case 'idempotency_conflict':
        throw new AppError('idempotency_conflict', 'this idempotencyKey was used with a different request');
      case 'busy':
        throw new AppError('conversation_busy', 'a turn is already active on this conversation', { activeTurnId: decision.activeTurnId });
      case 'create':
        for (const ended of admission.interrupted) await announceTurnEnd(this.deps, ended, null, INTERRUPTED);
        if (decision.enqueueNow) await this.enqueue({ ...admission.turn!, activeTurnsOfUser: admission.activeOfUser });
        return { turn: admission.turn!, created: true };
    }
  }

  async cancel(userId: string, turnId: string): Promise<Turn> {
    const turn = await this.deps.turns.getForUser(userId, turnId);
    if (!turn) throw notFound('turn');
    if (isTerminal(turn.status)) return turn;
    // Committed first, then signalled (endTurn): a job that starts after the signal finds the
    // turn ended; one that started before is aborted by it.
    const ended = await endTurn(this.deps, turn, null, { status: 'cancelled', finishReason: 'cancelled' });
    return ended ?? (await this.deps.turns.get(turnId)) ?? turn;
  }

  private async enqueue(turn: Turn & { activeTurnsOfUser: number }): Promise<void> {
    try {
      await this.deps.enqueueTurn(turn);
    } catch {
      // The turn is recorded; the reconciler enqueues it once Redis answers again.
      throw new AppError(
        'unavailable',
        'the queue is unavailable; the turn is recorded and runs when it is back (repeat the request with the same idempotencyKey to follow it)',
        { turnId: turn.id },
        5,
      );
    }
  }
}

function hashRequest(request: TurnRequest): string {
  return createHash('sha256').update(JSON.stringify({ content: request.content, options: request.options })).digest('hex');
}
