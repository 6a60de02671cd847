import type { Queryable } from '../../store/db';
import type { BudgetSubject } from '../../store/turns-repository';
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

/** A standing with whose budget it is. */
export type ScopedStanding = BudgetStanding & { scope: BudgetScope; subjectId: string };

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

  /** The user, or the API key (revoked ones too: their budget still counts what they spent). */
  async subjectExists(subject: BudgetSubject): Promise<boolean> {
    const { rows } = await this.db.query(subject.scope === 'user' ? 'SELECT 1 FROM users WHERE id = $1' : 'SELECT 1 FROM api_keys WHERE id = $1', [subject.id]);
    return rows.length > 0;
  }

  async delete(scope: BudgetScope, subjectId: string): Promise<boolean> {
    const { rows } = await this.db.query('DELETE FROM budgets WHERE scope = $1 AND subject_id = $2 RETURNING 1', [scope, subjectId]);
    return rows.length > 0;
  }

  /**
   * The budgets among `subjects` (a turn's user and key) with what the ledger says each has spent
   * in its current period, in one round trip (admission and every step read it).
   */
  async standings(subjects: readonly BudgetSubject[], starts: { day: Date; month: Date }): Promise<ScopedStanding[]> {
    if (subjects.length === 0) return [];
    const { day, month } = starts;
    const since = "CASE b.period WHEN 'day' THEN $3::timestamptz WHEN 'month' THEN $4::timestamptz ELSE '-infinity'::timestamptz END";
    const sums = 'COALESCE(SUM(cost_usd), 0)::float8 AS spent_usd, COALESCE(SUM(total_tokens), 0)::float8 AS spent_tokens';
    const { rows } = await this.db.query<BudgetRow & { scope: BudgetScope; subject_id: string; spent_usd: number; spent_tokens: number }>(
      `SELECT b.scope, b.subject_id, b.period, b.limit_usd, b.limit_tokens, b.on_exceeded, s.spent_usd, s.spent_tokens
         FROM budgets b
         JOIN unnest($1::text[], $2::text[]) AS wanted(scope, subject_id) ON wanted.scope = b.scope AND wanted.subject_id = b.subject_id,
              -- One branch per scope, each on its own index (provider_calls_user_time, provider_calls_key_time).
              LATERAL (SELECT SUM(u.spent_usd)::float8 AS spent_usd, SUM(u.spent_tokens)::float8 AS spent_tokens FROM (
                         SELECT ${sums} FROM provider_calls WHERE b.scope = 'user' AND user_id = b.subject_id AND started_at >= ${since}
                         UNION ALL
                         SELECT ${sums} FROM provider_calls WHERE b.scope = 'key' AND key_id = b.subject_id AND started_at >= ${since}) u) s
        ORDER BY b.scope DESC`,
      [subjects.map((subject) => subject.scope), subjects.map((subject) => subject.id), day, month],
    );
    return rows.map((row) => ({
      scope: row.scope,
      subjectId: row.subject_id,
      period: row.period,
      ...(row.limit_usd !== null ? { limitUsd: Number(row.limit_usd) } : {}),
      ...(row.limit_tokens !== null ? { limitTokens: Number(row.limit_tokens) } : {}),
      onExceeded: row.on_exceeded,
      spentUsd: Math.round(row.spent_usd * 1e8) / 1e8,
      spentTokens: row.spent_tokens,
    }));
  }

  /**
   * Tells of a budget found reached with the `budget.exceeded` webhook, once per period whoever
   * finds it (migrations/0034_budget_exceeded_webhook.sql). True when this call told of it.
   */
  async noticeExceeded(standing: ScopedStanding, periodStartsAt: Date, userId: string, reached: { limit: unknown; spent: number }): Promise<boolean> {
    const data = {
      userId,
      ...(standing.scope === 'key' ? { keyId: standing.subjectId } : {}),
      period: standing.period,
      limit: reached.limit,
      spent: reached.spent,
    };
    const { rows } = await this.db.query<{ told: boolean }>('SELECT notice_budget_exceeded($1, $2, $3, $4, $5) AS told', [
      standing.scope,
      standing.subjectId,
      periodStartsAt,
      userId,
      JSON.stringify(data),
    ]);
    return rows[0]?.told === true;
  }

  /** One subject's budget with its period's spending (null: it has none). */
  async standingOf(subject: BudgetSubject, starts: { day: Date; month: Date }): Promise<ScopedStanding | null> {
    return (await this.standings([subject], starts))[0] ?? null;
  }
}
