import type { Price } from '../models/models-file-schema';
import type { LedgerTokens } from '../store/provider-calls-repository';

export interface CallCost {
  costUsd: number;
  /** False: the model has no price, and its calls cost 0 (a USD limit does not count them). */
  priced: boolean;
}

/** `(prompt − cached) × input + cached × cachedInput + completion × output`, prices per million tokens. */
export function costOf(tokens: LedgerTokens, price: Price | undefined): CallCost {
  if (!price) return { costUsd: 0, priced: false };
  const uncached = Math.max(0, tokens.promptTokens - tokens.cachedPromptTokens);
  const micro = uncached * price.input + tokens.cachedPromptTokens * price.cachedInput + tokens.completionTokens * price.output;
  return { costUsd: micro / 1_000_000, priced: true };
}
