import { readJobFailure } from '../queue/job-failure';
import type { ObservedJob } from '../queue/job-states';

export type ReconcileAction =
  | { kind: 'none' }
  /** No job will ever run this turn: enqueue its start (a deterministic id, so never twice). */
  | { kind: 'enqueue' }
  /** Its job failed for good but the turn was never ended (the database was down then). */
  | { kind: 'fail'; error: { code: 'stalled' | 'internal'; message: string } }
  /** Its job used up its attempts while PostgreSQL or Redis was away: run that job again. */
  | { kind: 'retry'; jobId: string };

const isLive = (job: ObservedJob) => job.state === 'live';

/**
 * What the reconciler does with an unfinished turn that is first in its conversation, given
 * the state of every job that could move it on: its start, its step's continuation, its
 * client-answer resume, and the timeouts of its unanswered client tools. Pure.
 */
export function decideReconcile(
  turn: { status: string; awaiting: 'tools' | 'clients' | 'approvals' | 'budget' | null },
  jobs: {
    turnJobs: ObservedJob[];
    /**
     * One per call of the parked step that something outside the turn settles: an unanswered
     * client call's timeout, an undecided call's approval expiry, an approved call's tool job.
     */
    clientTimeouts: ObservedJob[];
  },
): ReconcileAction {
  if (jobs.turnJobs.some(isLive)) return { kind: 'none' };
  const failed = jobs.turnJobs.find((job) => job.state === 'failed');
  if (failed) {
    // An outage longer than the job's backoff is no fault of the turn's; the reconciler only
    // runs while PostgreSQL answers, so the outage is over now.
    const failure = readJobFailure(failed.failedReason);
    if (failure === 'backend_unavailable') return { kind: 'retry', jobId: failed.id };
    const stalled = failure === 'stalled';
    return {
      kind: 'fail',
      error: stalled
        ? { code: 'stalled', message: 'the workers running this turn stopped too many times' }
        : { code: 'internal', message: `the turn's job failed: ${failed.failedReason ?? 'unknown reason'}` },
    };
  }
  // Parked for client answers: nothing runs until an answer or a timeout arrives, so it is
  // stuck if a timeout job is gone (then a run re-arms them), or if every call has its answer:
  // the process that stored the last one died before resuming the turn, and nothing else will.
  if (turn.status === 'waiting_tools' && (turn.awaiting === 'clients' || turn.awaiting === 'approvals')) {
    const everyCallAnswered = jobs.clientTimeouts.length === 0;
    if (everyCallAnswered) return { kind: 'enqueue' };
    return jobs.clientTimeouts.every(isLive) ? { kind: 'none' } : { kind: 'enqueue' };
  }
  return { kind: 'enqueue' };
}
