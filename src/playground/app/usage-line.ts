/** What the playground reads of a turn's `usage` (GET /v1/turns/:id: the ledger's sum for the turn). */
export interface TurnUsage {
  totalTokens: number;
  costUsd: number;
}

const TOKENS = new Intl.NumberFormat('en-US');
// Two significant digits for the fractions of a cent a turn usually costs ($0.0021), cents above a dollar ($12.35).
const USD = new Intl.NumberFormat('en-US', { style: 'currency', currency: 'USD', maximumFractionDigits: 2, maximumSignificantDigits: 2, roundingPriority: 'morePrecision' });

/**
 * A turn's usage as one quiet line: "1,234 tokens · $0.0021", or the tokens alone when the turn
 * cost nothing (its models have no price in the models file: unpriced calls cost 0). Pure.
 */
export function usageLine(usage: TurnUsage): string {
  const tokens = `${TOKENS.format(usage.totalTokens)} ${usage.totalTokens === 1 ? 'token' : 'tokens'}`;
  return usage.costUsd > 0 ? `${tokens} · ${USD.format(usage.costUsd)}` : tokens;
}
