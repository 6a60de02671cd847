import type { ProviderError } from '../providers/provider-error';

export interface RetryPolicy {
  /** Retries after the first try; 429s and 5xx count alike. */
  maxRetries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /** The longest `Retry-After` waited out; a provider asking for more fails the turn. */
  maxRetryAfterMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxRetries: 5, baseDelayMs: 500, maxDelayMs: 30_000, maxRetryAfterMs: 15 * 60_000 };

export type RetryDecision = { kind: 'retry'; delayMs: number } | { kind: 'fail'; code: 'provider_error' | 'retries_exhausted'; message: string } | { kind: 'abandon' };

/**
 * What to do after a provider failure. Pure: the caller supplies the retry count and the
 * randomness (full jitter) so the decision is testable.
 */
export function decideProviderRetry(error: ProviderError, retriesSoFar: number, policy: RetryPolicy = DEFAULT_RETRY_POLICY, random: () => number = Math.random): RetryDecision {
  if (error.kind === 'aborted') return { kind: 'abandon' };
  if (!error.retryable) return { kind: 'fail', code: 'provider_error', message: error.message };
  if (retriesSoFar >= policy.maxRetries) {
    return { kind: 'fail', code: 'retries_exhausted', message: `gave up after ${retriesSoFar + 1} tries: ${error.message}` };
  }
  const backoff = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retriesSoFar);
  const jittered = Math.round(backoff / 2 + (random() * backoff) / 2);
  if (error.retryAfterMs !== undefined && error.retryAfterMs > policy.maxRetryAfterMs) {
    return {
      kind: 'fail',
      code: 'provider_error',
      message: `the provider asked to wait ${Math.round(error.retryAfterMs / 1000)} s, longer than the ${Math.round(policy.maxRetryAfterMs / 1000)} s allowed: ${error.message}`,
    };
  }
  // Retry-After wins when the provider says so, even past the SDK's 60 s cap: the job is
  // delayed in Redis rather than a worker sleeping on it.
  return { kind: 'retry', delayMs: Math.max(jittered, error.retryAfterMs ?? 0) };
}
