import { JOB_CATALOG } from '../queue/job-catalog';
import type { ToolDescriptor } from '../tools/tool';

/** Each attempt also waits for a free worker: taken from the queue, or back from the delayed set. */
const QUEUE_WAIT_PER_ATTEMPT_MS = 2000;
/** The enqueue, and the outcome's way back to the waiting request. */
const QUEUE_MARGIN_MS = 10_000;

/**
 * How long a direct invocation waits for its job before it answers 503 (the caller asks again
 * with the same key): the time of an `invoke` job in the catalog, which is every attempt's
 * timeout and every delay of the tool retry policy between them, and a margin for the queue.
 */
export function invocationWaitMs(tool: Pick<ToolDescriptor, 'timeoutMs' | 'retries'>): number {
  return JOB_CATALOG.invoke.timeoutMs(tool) + QUEUE_WAIT_PER_ATTEMPT_MS * (tool.retries + 1) + QUEUE_MARGIN_MS;
}
