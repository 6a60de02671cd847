import type { Queryable } from '../../store/db';

export const USAGE_GROUPS = ['day', 'model', 'conversation', 'agent', 'key'] as const;
export type UsageGroup = (typeof USAGE_GROUPS)[number];

/** Sums of ledger lines (docs/API.md, "Usage and budgets"). */
export interface UsageFigures {
  promptTokens: number;
  cachedPromptTokens: number;
  completionTokens: number;
  reasoningTokens: number;
  totalTokens: number;
  costUsd: number;
  calls: number;
}

export interface UsageQuery {
  /** Every user's when absent (the admin's view). */
  userId?: string;
  from?: Date;
  to?: Date;
  groupBy: UsageGroup;
}

const GROUP_EXPRESSIONS: Record<UsageGroup, string> = {
  // Periods are UTC calendar days.
  day: "to_char(started_at AT TIME ZONE 'UTC', 'YYYY-MM-DD')",
  model: "provider || '/' || model",
  conversation: 'conversation_id',
  // The agent its turn ran on, carried by the line (migrations/0035): null for a turn without one.
  agent: 'agent_id',
  // The key that admitted the call's turn; null for a batch's items and older lines.
  key: 'key_id',
};

const SUMS = `COALESCE(SUM(prompt_tokens), 0)::float8 AS prompt_tokens,
  COALESCE(SUM(cached_prompt_tokens), 0)::float8 AS cached_prompt_tokens,
  COALESCE(SUM(completion_tokens), 0)::float8 AS completion_tokens,
  COALESCE(SUM(reasoning_tokens), 0)::float8 AS reasoning_tokens,
  COALESCE(SUM(total_tokens), 0)::float8 AS total_tokens,
  COALESCE(SUM(cost_usd), 0)::float8 AS cost_usd,
  COUNT(*)::float8 AS calls`;

interface SumRow {
  group?: string | null;
  prompt_tokens: number;
  cached_prompt_tokens: number;
  completion_tokens: number;
  reasoning_tokens: number;
  total_tokens: number;
  cost_usd: number;
  calls: number;
}

/** Reads the usage ledger (provider_calls, migrations/0030_usage_ledger.sql) as sums. */
export class UsageLedgerRepository {
  constructor(private readonly db: Queryable) {}

  /** The query's lines summed by group (in the group's order) and in all. */
  async summarise(query: UsageQuery): Promise<{ data: ({ group: string | null } & UsageFigures)[]; totals: UsageFigures }> {
    const conditions: string[] = [];
    const params: unknown[] = [];
    if (query.userId !== undefined) conditions.push(`user_id = $${params.push(query.userId)}`);
    if (query.from) conditions.push(`started_at >= $${params.push(query.from)}`);
    if (query.to) conditions.push(`started_at < $${params.push(query.to)}`);
    const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
    const expression = GROUP_EXPRESSIONS[query.groupBy];
    const [grouped, totals] = await Promise.all([
      this.db.query<SumRow>(`SELECT ${expression} AS "group", ${SUMS} FROM provider_calls ${where} GROUP BY 1 ORDER BY 1`, params),
      this.db.query<SumRow>(`SELECT ${SUMS} FROM provider_calls ${where}`, params),
    ]);
    return { data: grouped.rows.map((row) => ({ group: row.group ?? null, ...figuresOf(row) })), totals: figuresOf(totals.rows[0]!) };
  }

  /**
   * A conversation's lines summed: a batch item's usage (each item is a conversation of its own),
   * every turn and call of it, discarded attempts included. Read through its index (0055).
   */
  async forConversation(conversationId: string): Promise<UsageFigures> {
    const { rows } = await this.db.query<SumRow>(`SELECT ${SUMS} FROM provider_calls WHERE conversation_id = $1`, [conversationId]);
    return figuresOf(rows[0]!);
  }

  /**
   * A turn's lines summed: everything the provider billed for it, discarded attempts included.
   * The SQL function its webhooks read too (migrations/0032_budget_waits.sql): one figure everywhere.
   */
  async forTurn(turnId: string): Promise<UsageFigures> {
    const { rows } = await this.db.query<{ usage: UsageFigures }>('SELECT turn_ledger_usage($1) AS usage', [turnId]);
    const usage = rows[0]!.usage;
    return {
      promptTokens: Number(usage.promptTokens),
      cachedPromptTokens: Number(usage.cachedPromptTokens),
      completionTokens: Number(usage.completionTokens),
      reasoningTokens: Number(usage.reasoningTokens),
      totalTokens: Number(usage.totalTokens),
      costUsd: Number(usage.costUsd),
      calls: Number(usage.calls),
    };
  }
}

function figuresOf(row: SumRow): UsageFigures {
  return {
    promptTokens: row.prompt_tokens,
    cachedPromptTokens: row.cached_prompt_tokens,
    completionTokens: row.completion_tokens,
    reasoningTokens: row.reasoning_tokens,
    totalTokens: row.total_tokens,
    // Rounded to a millionth of a cent: a sum of float prices carries noise below that.
    costUsd: Math.round(row.cost_usd * 1e8) / 1e8,
    calls: row.calls,
  };
}
