import { turnViewOf } from '@switchyard/client';

/**
 * What a client shows of a turn once it has applied `attempt-discarded` as API.md says (the
 * client library's turn view): the text of each step, by step number.
 */
export function visibleStepTexts(turnEvents: any[]): Map<number, string> {
  const first = turnEvents[0];
  if (!first) return new Map();
  return new Map(turnViewOf(first.turnId, first.conversationId, turnEvents).steps.map((step) => [step.step, step.text]));
}

/** The turn's events, as a client received them (`events` of every turn of the conversation). */
export const eventsOfTurn = (events: any[], turnId: string) => events.filter((event) => event.turnId === turnId);

/** The `attempt` of every `turn-start`, in order. */
export const startedAttempts = (turnEvents: any[]) => turnEvents.filter((event) => event.type === 'turn-start').map((event) => event.attempt);
