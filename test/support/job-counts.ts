import type { Queue } from 'bullmq';
import { poll } from './poll';

/** Every state in which a job would still run, and `failed`. */
const UNFINISHED = ['wait', 'active', 'delayed', 'prioritized', 'waiting-children', 'failed'] as const;

/**
 * Waits until `queue` holds no job that would still run, nor a failed one. A turn's job moves
 * to completed only after the turn's end is announced, so a client that saw the end may read
 * it active for a moment.
 */
export async function waitForNoJobLeft(queue: Pick<Queue, 'getJobCounts'>, timeoutMs = 10_000): Promise<void> {
  let counts: Record<string, number> = {};
  await poll(
    () => `jobs are left behind: ${JSON.stringify(counts)}`,
    async () => {
      counts = await queue.getJobCounts(...UNFINISHED);
      return Object.values(counts).every((count) => count === 0);
    },
    timeoutMs,
  );
}
