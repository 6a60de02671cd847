/**
 * What a client shows of a turn once it has applied `attempt-discarded` as API.md says: the
 * text it received for a step since that step's `step-start`, minus what a discarded attempt
 * sent. Returns the text of each step, by step number.
 */
export function visibleStepTexts(turnEvents: any[]): Map<number, string> {
  const texts = new Map<number, string>();
  let current: number | undefined;
  for (const event of turnEvents) {
    switch (event.type) {
      case 'step-start':
        current = event.step;
        texts.set(event.step, '');
        break;
      case 'text-delta':
        if (current !== undefined) texts.set(current, (texts.get(current) ?? '') + event.delta);
        break;
      case 'attempt-discarded':
        texts.delete(event.step);
        current = undefined;
        break;
    }
  }
  return texts;
}

/** The turn's events, as a client received them (`events` of every turn of the conversation). */
export const eventsOfTurn = (events: any[], turnId: string) => events.filter((event) => event.turnId === turnId);

/** The `attempt` of every `turn-start`, in order. */
export const startedAttempts = (turnEvents: any[]) => turnEvents.filter((event) => event.type === 'turn-start').map((event) => event.attempt);
