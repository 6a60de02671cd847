import { periodAt } from './budget-period';
import type { Budget, Spent } from './store/budgets-repository';

/** What a 429 `budget_exceeded` says: the limit reached, what was spent against it, and when it resets. */
export interface BudgetExceeded {
  limit: { usd: number } | { tokens: number };
  spent: number;
  resetsAt: string | null;
  onExceeded: Budget['onExceeded'];
}

/**
 * Whether a budget is reached: at or past a limit. A USD limit counts priced calls (unpriced
 * ones cost 0), a token limit all of them (docs/API.md, "Usage and budgets").
 */
/** Where the current UTC day and month began: what a budget's spending is summed since. */
export function periodStarts(now: Date): { day: Date; month: Date } {
  return { day: periodAt('day', now).startsAt, month: periodAt('month', now).startsAt };
}

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
