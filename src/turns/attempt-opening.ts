import type { EventPayload } from '../events/event';
import type { TurnStatus } from '../store/turns-repository';

export interface AttemptOpeningFacts {
  /** The attempt that begins. */
  attempt: number;
  /** The turn's last committed step (0: none yet). */
  committedStep: number;
  /** The turn's status before this attempt took it. */
  previousStatus: TurnStatus;
  /** The in-flight marker an earlier attempt left in Redis (only an earlier attempt leaves one). */
  marker: { attempt: number; step: number } | null;
}

/**
 * The events that open a new attempt: `turn-start`, then `attempt-discarded` when the last
 * attempt streamed part of a step that was never committed, so that clients drop it. A worker
 * that died mid-step without a marker (Redis lost it) may have sent output too. Pure.
 */
export function attemptOpeningEvents(facts: AttemptOpeningFacts): EventPayload[] {
  const { attempt, committedStep, previousStatus, marker } = facts;
  const opening: EventPayload[] = [{ type: 'turn-start', attempt }];
  if (marker && marker.step === committedStep + 1) {
    opening.push({ type: 'attempt-discarded', attempt: marker.attempt, step: marker.step });
  } else if (!marker && previousStatus === 'running' && attempt > 1) {
    opening.push({ type: 'attempt-discarded', attempt: attempt - 1, step: committedStep + 1 });
  }
  return opening;
}
