import { budgetReached } from '../../../src/usage/budget-decision';
import { periodAt } from '../../../src/usage/budget-period';

describe("a budget's period", () => {
  const now = new Date('2026-12-31T23:59:59.500Z');

  it('is the UTC calendar day or month holding now, or all time', () => {
    expect(periodAt('day', now)).toEqual({ startsAt: new Date('2026-12-31T00:00:00Z'), resetsAt: new Date('2027-01-01T00:00:00Z') });
    expect(periodAt('month', now)).toEqual({ startsAt: new Date('2026-12-01T00:00:00Z'), resetsAt: new Date('2027-01-01T00:00:00Z') });
    expect(periodAt('total', now)).toEqual({ startsAt: new Date(0), resetsAt: null });
  });
});

describe('a budget reached', () => {
  it('at or past a limit, the USD one first, with what was spent against it', () => {
    const budget = { period: 'day' as const, limitUsd: 1, limitTokens: 100, onExceeded: 'reject' as const };
    expect(budgetReached(budget, { spentUsd: 0.99, spentTokens: 99 }, null)).toBeNull();
    expect(budgetReached(budget, { spentUsd: 0.99, spentTokens: 100 }, null)).toEqual({ limit: { tokens: 100 }, spent: 100, resetsAt: null, onExceeded: 'reject' });
    expect(budgetReached(budget, { spentUsd: 1, spentTokens: 0 }, new Date('2027-01-01T00:00:00Z'))).toEqual({
      limit: { usd: 1 },
      spent: 1,
      resetsAt: '2027-01-01T00:00:00.000Z',
      onExceeded: 'reject',
    });
  });
});
