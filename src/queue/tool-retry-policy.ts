/** A tool's limits, as its descriptor gives them: `timeoutMs` per attempt, `retries` extra attempts. */
export interface ToolAttemptLimits {
  timeoutMs: number;
  retries: number;
}

/** After a retryable failure: run the tool again after `delayMs`, or stop (its retries are spent). */
export type ToolRetry = { kind: 'retry'; delayMs: number } | { kind: 'stop' };

/**
 * The tool retry policy: after attempt `attempt` (1 for the first) of a tool with `retries`
 * extra attempts, retry n waits 500 ms, doubling. The tool worker delays the job by it, and a
 * direct invocation's wait adds it up (see {@link toolExecutionsTimeMs}), so the two never
 * disagree.
 */
export function toolRetryAfter(attempt: number, retries: number): ToolRetry {
  return attempt <= retries ? { kind: 'retry', delayMs: 500 * 2 ** (attempt - 1) } : { kind: 'stop' };
}

/**
 * The longest a tool's executions take when every attempt fails retryably at its timeout:
 * each attempt's `timeoutMs` and every delay {@link toolRetryAfter} puts between them. At the
 * `retries: 10` a tool file allows, the delays alone are 511.5 s.
 */
export function toolExecutionsTimeMs(tool: ToolAttemptLimits): number {
  let totalMs = 0;
  for (let attempt = 1; ; attempt++) {
    totalMs += tool.timeoutMs;
    const next = toolRetryAfter(attempt, tool.retries);
    if (next.kind === 'stop') return totalMs;
    totalMs += next.delayMs;
  }
}
