import type { Turn } from '../store/turns-repository';

/** A turn just admitted, as the turn service enqueues it. */
export type AdmittedTurn = Turn & { activeTurnsOfUser?: number };

/** What takes a turn locally: true when it did (its job added as the run's lease), false to enqueue as usual. */
export type StartTurnHere = (turn: AdmittedTurn) => Promise<boolean>;

/**
 * Where a process's API offers the turns it has just admitted to the same process's turn slots
 * (local-turn-slots.ts). Only a process that runs both roles has anything attached (the worker's
 * start attaches its slots); elsewhere, and while every attached set is full or closing, the
 * offer is declined and the turn is enqueued as usual.
 */
export class TurnHandOff {
  private readonly targets = new Set<StartTurnHere>();

  /** Attaches a set of slots; call the returned function once they close. */
  attach(start: StartTurnHere): () => void {
    this.targets.add(start);
    return () => void this.targets.delete(start);
  }

  /** True when a local slot took the turn; throws as an enqueue does when its job could not be added. */
  async offer(turn: AdmittedTurn): Promise<boolean> {
    for (const start of this.targets) if (await start(turn)) return true;
    return false;
  }
}
