import type { ToolOutcome } from '../tools/tool';

/** What a tool's call or invocation stores once it has its outcome. */
export type ToolSettlement = { status: 'succeeded'; result: unknown } | { status: 'failed'; error: { code: string; message: string } };

/**
 * After one execution: run the tool again after `delayMs` (nothing stored), or store its outcome.
 * `error` is the failure that is retried, for the job's log.
 */
export type ToolAttemptDecision =
  | { kind: 'retry'; delayMs: number; error: { code: string; message: string } }
  | { kind: 'settle'; settlement: ToolSettlement };

/** Before a tool's retry n (1, 2, …): 500 ms, doubling. */
export const toolRetryDelayMs = (retry: number) => 500 * 2 ** (retry - 1);

/**
 * A retryable failure runs again while the tool has retries left: `attempts` is the attempt
 * that just ran (1 for the first), counted on the call, and `retries` the tool's extra attempts.
 * Anything else is stored, a failure without its `retryable` hint (the model is not told it).
 */
export function decideAfterAttempt(outcome: ToolOutcome, attempts: number, retries: number): ToolAttemptDecision {
  if (outcome.ok) return { kind: 'settle', settlement: { status: 'succeeded', result: outcome.result } };
  const { retryable, ...error } = outcome.error;
  if (retryable && attempts <= retries) {
    return { kind: 'retry', delayMs: toolRetryDelayMs(attempts), error: { code: error.code, message: error.message } };
  }
  return { kind: 'settle', settlement: { status: 'failed', error } };
}
