import { DelayedError, UnrecoverableError, WaitingChildrenError, WaitingError } from 'bullmq';
import { isBackendUnavailable } from '../errors/backend-unavailable';
import { errorMessage } from '../errors/switchyard-error';

/**
 * Why one of our jobs failed, written first in the error it fails with, because BullMQ keeps
 * only that message (`failedReason`) and whoever reads the job later (the reconciler) must
 * tell an outage from a bug without guessing at another library's wording.
 */
export type JobFailureCode = 'backend_unavailable' | 'internal' | 'malformed_job';

/** What a failed job's `failedReason` says; one we did not write is BullMQ's own stall limit. */
export type ReadJobFailure = JobFailureCode | 'stalled';

const CODES: ReadonlySet<string> = new Set<JobFailureCode>(['backend_unavailable', 'internal', 'malformed_job']);

export function jobFailure(code: JobFailureCode, cause: unknown): Error {
  const message = `${code}: ${errorMessage(cause)}`;
  // Malformed data never becomes well-formed: no further attempt.
  return code === 'malformed_job' ? new UnrecoverableError(message) : new Error(message, { cause });
}

/** The error a processor fails with: BullMQ's control errors pass through, ours are coded. */
export function toJobFailure(thrown: unknown): unknown {
  if (thrown instanceof DelayedError || thrown instanceof WaitingChildrenError || thrown instanceof WaitingError) return thrown;
  if (thrown instanceof Error && readJobFailure(thrown.message) !== 'stalled') return thrown;
  return jobFailure(isBackendUnavailable(thrown) ? 'backend_unavailable' : 'internal', thrown);
}

export function readJobFailure(failedReason: string | undefined): ReadJobFailure {
  const code = failedReason?.split(':', 1)[0];
  return code !== undefined && CODES.has(code) ? (code as JobFailureCode) : 'stalled';
}
