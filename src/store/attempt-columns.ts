import { toStorableJson } from '../storable/storable-text';

/**
 * The columns a run of a tool keeps, shared by a turn's tool calls and direct invocations:
 * the same states, attempt count, outcome and timings, and the same statements move them.
 */
export type AttemptStatus = 'pending' | 'running' | 'succeeded' | 'failed' | 'cancelled';
export type AttemptError = { code: string; message: string; [key: string]: unknown };

export interface AttemptRow<Status extends AttemptStatus = AttemptStatus> {
  status: Status;
  attempts: number;
  result: unknown;
  error: AttemptError | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export interface AttemptFields<Status extends AttemptStatus = AttemptStatus> {
  status: Status;
  attempts: number;
  result: unknown;
  error: AttemptError | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

/** Not settled yet: may still run, or get its outcome. */
export const UNSETTLED = `('pending', 'running')`;

/** SET clause of a new attempt: counted, and started (the first start is kept). */
export const START_ATTEMPT = `status = 'running', attempts = attempts + 1, started_at = COALESCE(started_at, clock_timestamp())`;

export type Outcome = { status: 'succeeded'; result: unknown } | { status: 'failed' | 'cancelled'; error: { code: string; message: string } };

/** The result and error column values of an outcome, as JSON PostgreSQL can store. */
export function outcomeColumns(outcome: Outcome): [result: string | null, error: string | null] {
  // A tool may answer with text PostgreSQL refuses (a NUL): stored with U+FFFD instead.
  return outcome.status === 'succeeded' ? [JSON.stringify(toStorableJson(outcome.result ?? null)), null] : [null, JSON.stringify(toStorableJson(outcome.error))];
}

export function attemptFields<Status extends AttemptStatus>(row: AttemptRow<Status>): AttemptFields<Status> {
  return {
    status: row.status,
    attempts: row.attempts,
    result: row.result,
    error: row.error,
    createdAt: row.created_at.toISOString(),
    startedAt: row.started_at?.toISOString() ?? null,
    finishedAt: row.finished_at?.toISOString() ?? null,
  };
}
