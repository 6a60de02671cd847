import type { BudgetPeriod } from './store/budgets-repository';

/** The period that holds `now`: when it began and when the next begins (null: it never resets). */
export function periodAt(period: BudgetPeriod, now: Date): { startsAt: Date; resetsAt: Date | null } {
  const year = now.getUTCFullYear();
  const month = now.getUTCMonth();
  switch (period) {
    case 'day': {
      const startsAt = new Date(Date.UTC(year, month, now.getUTCDate()));
      return { startsAt, resetsAt: new Date(startsAt.getTime() + 86_400_000) };
    }
    case 'month':
      return { startsAt: new Date(Date.UTC(year, month, 1)), resetsAt: new Date(Date.UTC(year, month + 1, 1)) };
    case 'total':
      return { startsAt: new Date(0), resetsAt: null };
  }
}
