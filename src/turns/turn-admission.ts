import type { Turn } from '../store/turns-repository';

export type OnBusy = 'reject' | 'enqueue' | 'interrupt';

export type Admission =
  /** The idempotency key was used before with the same request: answer with that turn. */
  | { kind: 'replay'; turn: Turn }
  | { kind: 'idempotency_conflict' }
  | { kind: 'busy'; activeTurnId: string }
  /** Create the turn; enqueue it now only when nothing runs ahead of it. */
  | { kind: 'create'; enqueueNow: boolean; interrupt: Turn[] };

/**
 * Decides what `POST /turns` does. Pure: the caller reads the facts inside a transaction
 * that holds the conversation's row lock, so concurrent posts see each other's turns.
 */
export function admitTurn(facts: { existingForKey: Turn | null; requestHash: string; activeTurns: Turn[]; onBusy: OnBusy }): Admission {
  if (facts.existingForKey) {
    return facts.existingForKey.requestHash === facts.requestHash ? { kind: 'replay', turn: facts.existingForKey } : { kind: 'idempotency_conflict' };
  }
  const active = facts.activeTurns[0];
  if (!active) return { kind: 'create', enqueueNow: true, interrupt: [] };
  switch (facts.onBusy) {
    case 'reject':
      return { kind: 'busy', activeTurnId: active.id };
    case 'enqueue':
      return { kind: 'create', enqueueNow: false, interrupt: [] };
    case 'interrupt':
      return { kind: 'create', enqueueNow: true, interrupt: facts.activeTurns };
  }
}
