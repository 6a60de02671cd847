/** When a delivery is tried again (docs: README, "Webhooks"). */
export interface RetrySchedule {
  /** The waits after the 1st, 2nd, … failed attempt; the last repeats until `retryForMs` is spent. */
  delaysMs: readonly number[];
  /** How long after its event, or after the redeliver that sent it again, a delivery is still tried. */
  retryForMs: number;
}

export type RetryDecision = { kind: 'retry'; delayMs: number } | { kind: 'give_up' };

/**
 * Whether the delivery whose `failedAttempts`-th attempt just failed is tried again, and when.
 * Jitter (±10 %, from `random`) keeps the deliveries of one outage from coming back in step.
 * No retry starts past `retryForMs` after the delivery's first attempt was due (`sinceStartMs`):
 * its event, or the redeliver that started it again.
 */
export function decideRetry(schedule: RetrySchedule, facts: { failedAttempts: number; sinceStartMs: number }, random: () => number = Math.random): RetryDecision {
  const { delaysMs } = schedule;
  const base = delaysMs[Math.min(facts.failedAttempts, delaysMs.length) - 1];
  if (base === undefined) return { kind: 'give_up' };
  const delayMs = Math.round(base * (0.9 + 0.2 * random()));
  if (facts.sinceStartMs + delayMs > schedule.retryForMs) return { kind: 'give_up' };
  return { kind: 'retry', delayMs };
}
