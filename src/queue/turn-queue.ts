import { Queue, type ConnectionOptions, type Job } from 'bullmq';
import { addJob, BATCH_TURN_QUEUE, TURN_QUEUE, type TurnJobData } from './job-catalog';

export { BATCH_TURN_QUEUE, TURN_QUEUE } from './job-catalog';

/** The turn id is the job id, so a turn cannot be enqueued twice while its job exists. */
export const turnJobId = (turnId: string) => `turn-${turnId}`;
/** Continues a turn whose last client-tool answer arrived (the flow's parent already ran). */
export const resumeJobId = (turnId: string, step: number) => `turn-${turnId}-s${step}-resume`;

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

/** A batch's priority (0-9) takes a place between two counts of active turns. */
const BATCH_BANDS = 10;

/**
 * A batch item's turn, on the batch queue: first by how many turns its user has active, as
 * interactive turns are, so that one user's 50,000 items do not starve another user's 50
 * whatever their batches' priorities; then by its batch's priority (0-9, higher first), which
 * orders a user's own batches (and two users' equally busy ones).
 */
export function batchPriority(batchPriorityValue: number, activeTurnsOfUser: number): number {
  const band = Math.min(9, Math.max(0, batchPriorityValue));
  const active = Math.min(Math.floor(LOWEST_PRIORITY / BATCH_BANDS) - 1, Math.max(1, activeTurnsOfUser));
  return active * BATCH_BANDS + (9 - band);
}

export function createTurnQueue(connection: ConnectionOptions, prefix: string, name: typeof TURN_QUEUE | typeof BATCH_TURN_QUEUE = TURN_QUEUE): Queue {
  return new Queue(name, { connection, prefix });
}

/** Job data for a turn: its id, and its trace when it has one. */
export const turnJobData = (turnId: string, traceparent?: string | null): TurnJobData => ({ turnId, ...(traceparent ? { traceparent } : {}) });

export function enqueueTurn(queue: Queue, turn: { id: string; conversationId?: string; traceparent?: string | null }, priority: number, delayMs = 0): Promise<Job> {
  const data = { ...turnJobData(turn.id, turn.traceparent), ...(turn.conversationId ? { conversationId: turn.conversationId } : {}) };
  return addJob(queue, 'run-turn', data, { jobId: turnJobId(turn.id), priority, ...(delayMs > 0 ? { delay: delayMs } : {}) });
}

export async function enqueueResume(queue: Queue, turnId: string, step: number, traceparent?: string | null): Promise<void> {
  await addJob(queue, 'continue-turn', turnJobData(turnId, traceparent), { jobId: resumeJobId(turnId, step) });
}
