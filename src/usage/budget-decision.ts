import { periodAt } from './budget-period';
import type { Budget, ScopedStanding, Spent } from './store/budgets-repository';

/** What a 429 `budget_exceeded` says: the limit reached, what was spent against it, and when it resets. */
export interface BudgetExceeded {
  limit: { usd: number } | { tokens: number };
  spent: number;
  resetsAt: string | null;
  onExceeded: Budget['onExceeded'];
}

/** Where the current UTC day and month began: what a budget's spending is summed since. */
export function periodStarts(now: Date): { day: Date; month: Date } {
  return { day: periodAt('day', now).startsAt, month: periodAt('month', now).startsAt };
}

/**
 * Whether a budget is reached: at or past a limit. A USD limit counts priced calls (unpriced
 * ones cost 0), a token limit all of them (docs/API.md, "Usage and budgets").
 */
export function budgetReached(budget: Budget, spent: Spent, resetsAt: Date | null): BudgetExceeded | null {
  const resets = resetsAt ? resetsAt.toISOString() : null;
  if (budget.limitUsd !== undefined && spent.spentUsd >= budget.limitUsd) {
    return { limit: { usd: budget.limitUsd }, spent: spent.spentUsd, resetsAt: resets, onExceeded: budget.onExceeded };
  }
  if (budget.limitTokens !== undefined && spent.spentTokens >= budget.limitTokens) {
    return { limit: { tokens: budget.limitTokens }, spent: spent.spentTokens, resetsAt: resets, onExceeded: budget.onExceeded };
  }
  return null;
}

/** The first of a turn's budgets (its user's, then its key's) that is reached, with its reset. */
export function firstReached(standings: readonly ScopedStanding[], now: Date): { standing: ScopedStanding; reached: BudgetExceeded; startsAt: Date; resetsAt: Date | null } | null {
  for (const standing of standings) {
    const { startsAt, resetsAt } = periodAt(standing.period, now);
    const reached = budgetReached(standing, standing, resetsAt);
    if (reached) return { standing, reached, startsAt, resetsAt };
  }
  return null;
}

/** The subjects whose budgets a turn counts against: its user, and the key that admitted it. */
export function budgetSubjects(userId: string, keyId: string | null | undefined): { scope: 'user' | 'key'; id: string }[] {
  return [{ scope: 'user', id: userId }, ...(keyId ? [{ scope: 'key' as const, id: keyId }] : [])];
}

/**
 * The longest a turn parked by a `pause` budget sleeps before it looks again: a total budget has
 * no reset, and a raised budget's wake-up can miss a job that was still being parked.
 */
export const BUDGET_RECHECK_MS = 5 * 60_000;
/** The shortest: a worker whose clock is a little behind the period's end does not spin on it. */
export const BUDGET_MIN_WAIT_MS = 1000;

/** When a parked turn's job wakes by itself: at its period's reset, or at the next re-check. */
export function budgetWakeUp(resetsAt: Date | null, now: Date): { wakeAt: Date | null; delayMs: number } {
  const untilReset = resetsAt ? resetsAt.getTime() - now.getTime() : Infinity;
  const delayMs = Math.max(BUDGET_MIN_WAIT_MS, Math.min(untilReset, BUDGET_RECHECK_MS));
  return { wakeAt: resetsAt, delayMs };
}
