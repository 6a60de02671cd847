import { toolRetryAfter } from '../queue/tool-retry-policy';
import type { ToolOutcome } from '../tools/tool';

/** What a tool's call or invocation stores once it has its outcome. */
export type ToolSettlement = { status: 'succeeded'; result: unknown } | { status: 'failed'; error: { code: string; message: string } };

/**
 * After one execution: run the tool again after `delayMs` (nothing stored), or store its outcome.
 * `error` is the failure that is retried, for the job's log.
 */
export type ToolAttemptDecision = { kind: 'retry'; delayMs: number; error: { code: string; message: string } } | { kind: 'settle'; settlement: ToolSettlement };

/**
 * A retryable failure runs again when the tool retry policy says so: `attempts` is the attempt
 * that just ran (1 for the first), counted on the call, and `retries` the tool's extra attempts.
 * Anything else is stored, a failure without its `retryable` hint (the model is not told it).
 */
export function decideAfterAttempt(outcome: ToolOutcome, attempts: number, retries: number): ToolAttemptDecision {
  if (outcome.ok) return { kind: 'settle', settlement: { status: 'succeeded', result: outcome.result } };
  const { retryable, ...error } = outcome.error;
  const next = retryable ? toolRetryAfter(attempts, retries) : { kind: 'stop' as const };
  if (next.kind === 'retry') return { kind: 'retry', delayMs: next.delayMs, error: { code: error.code, message: error.message } };
  return { kind: 'settle', settlement: { status: 'failed', error } };
}
