import { Queue, type ConnectionOptions, type JobsOptions } from 'bullmq';
import { z } from 'zod';

export const TURN_QUEUE = 'turns';

/** Job data is ids only: content lives in PostgreSQL, and BullMQ keeps job data in clear text. */
export const turnJobSchema = z.object({ turnId: z.string().min(1) });
export type TurnJobData = z.infer<typeof turnJobSchema>;

/**
 * The turn id is the job id, so a turn cannot be enqueued twice while its job exists.
 * Completed jobs are removed at once: a re-enqueue after that starts a job that finds the
 * turn finished in PostgreSQL and returns.
 */
export const turnJobId = (turnId: string) => `turn-${turnId}`;
/** Continues a turn whose last client-tool answer arrived (the flow's parent already ran). */
export const resumeJobId = (turnId: string, step: number) => `turn-${turnId}-s${step}-resume`;

export const TURN_JOB_OPTIONS: JobsOptions = {
  // Retries of infrastructure failures (database or Redis errors); provider faults are
  // retried by the runner itself, stalls by BullMQ's stall checker.
  attempts: 5,
  backoff: { type: 'exponential', delay: 1000 },
  removeOnComplete: true,
  removeOnFail: { age: 7 * 24 * 3600 },
};

/** BullMQ's highest priority number; lower runs first. */
const LOWEST_PRIORITY = 2_097_152;

/**
 * Fairness without a queue per user: a turn's start is prioritised by how many turns its user
 * has active, so one user's thousandth queued turn waits behind another user's first. Jobs
 * without a priority (continuations of turns already running) go before all of them.
 */
export function fairPriority(activeTurnsOfUser: number): number {
  return Math.min(LOWEST_PRIORITY, Math.max(1, activeTurnsOfUser));
}

export function createTurnQueue(connection: ConnectionOptions, prefix: string): Queue {
  return new Queue(TURN_QUEUE, { connection, prefix });
}

export async function enqueueTurn(queue: Queue, turnId: string, priority: number, delayMs = 0): Promise<void> {
  const data: TurnJobData = { turnId };
  await queue.add('run-turn', data, { ...TURN_JOB_OPTIONS, jobId: turnJobId(turnId), priority, ...(delayMs > 0 ? { delay: delayMs } : {}) });
}

export async function enqueueResume(queue: Queue, turnId: string, step: number): Promise<void> {
  const data: TurnJobData = { turnId };
  await queue.add('continue-turn', data, { ...TURN_JOB_OPTIONS, jobId: resumeJobId(turnId, step) });
}
