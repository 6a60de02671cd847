import type { Queryable } from '../../store/db';
/** UTC calendar days and months, or all time. */
export type BudgetPeriod = 'day' | 'month' | 'total';

export interface Budget {
  period: BudgetPeriod;
  limitUsd?: number;
  limitTokens?: number;
  onExceeded: 'reject' | 'pause';
}

export interface Spent {
  spentUsd: number;
  spentTokens: number;
}

export type BudgetScope = 'user' | 'key';

interface BudgetRow {
  period: Budget['period'];
  limit_usd: string | null;
  limit_tokens: string | null;
  on_exceeded: Budget['onExceeded'];
}

/** A budget with what the ledger says was spent in its current period. */
export type BudgetStanding = Budget & Spent;

/** Budgets (migrations/0031_budgets.sql) and their spending, summed from the usage ledger. */
export class BudgetsRepository {
  constructor(private readonly db: Queryable) {}

  async put(scope: BudgetScope, subjectId: string, budget: Budget): Promise<void> {
    await this.db.query(
      `INSERT INTO budgets (scope, subject_id, period, limit_usd, limit_tokens, on_exceeded) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (scope, subject_id) DO UPDATE SET period = $3, limit_usd = $4, limit_tokens = $5, on_exceeded = $6, updated_at = now()`,
      [scope, subjectId, budget.period, budget.limitUsd ?? null, budget.limitTokens ?? null, budget.onExceeded],
    );
  }

  async userExists(userId: string): Promise<boolean> {
    const { rows } = await this.db.query('SELECT 1 FROM users WHERE id = $1', [userId]);
    return rows.length > 0;
  }

  async delete(scope: BudgetScope, subjectId: string): Promise<boolean> {
    const { rows } = await this.db.query('DELETE FROM budgets WHERE scope = $1 AND subject_id = $2 RETURNING 1', [scope, subjectId]);
    return rows.length > 0;
  }

  /**
   * A user's budget and what the ledger says was spent in its current period, in one round trip
   * (admission reads it for every new turn).
   */
  async standingOfUser(userId: string, starts: { day: Date; month: Date }): Promise<BudgetStanding | null> {
    const { day, month } = starts;
    const { rows } = await this.db.query<BudgetRow & { spent_usd: number; spent_tokens: number }>(
      `SELECT b.period, b.limit_usd, b.limit_tokens, b.on_exceeded, s.spent_usd, s.spent_tokens
         FROM budgets b,
              LATERAL (SELECT COALESCE(SUM(cost_usd), 0)::float8 AS spent_usd, COALESCE(SUM(total_tokens), 0)::float8 AS spent_tokens
                         FROM provider_calls
                        WHERE user_id = $1
                          AND started_at >= CASE b.period WHEN 'day' THEN $2::timestamptz WHEN 'month' THEN $3::timestamptz ELSE '-infinity'::timestamptz END) s
        WHERE b.scope = 'user' AND b.subject_id = $1`,
      [userId, day, month],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      period: row.period,
      ...(row.limit_usd !== null ? { limitUsd: Number(row.limit_usd) } : {}),
      ...(row.limit_tokens !== null ? { limitTokens: Number(row.limit_tokens) } : {}),
      onExceeded: row.on_exceeded,
      spentUsd: Math.round(row.spent_usd * 1e8) / 1e8,
      spentTokens: row.spent_tokens,
    };
  }
}
