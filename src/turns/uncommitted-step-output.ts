import type { EventPayload } from '../events/event';

/** The text and reasoning a step had streamed when its turn was stopped. */
export interface StreamedStepOutput {
  step: number;
  text: string;
  reasoning: string;
}

/**
 * What clients were shown of a step that no commit ended, from the turn's logged events in seq
 * order, as a client applies them (docs/API.md, "Events"): a `step-start` opens the step, an
 * `attempt-discarded` of it takes back what it showed, a `step-finish` closes it. Null when
 * the last step shown is among the `committedSteps` (its message is stored whole), or when it
 * streamed neither text nor reasoning. Its tool calls are left out: none of them was committed,
 * so none ran. Pure.
 */
export function uncommittedStepOutput(events: Iterable<EventPayload>, committedSteps: number): StreamedStepOutput | null {
  let shown: StreamedStepOutput | null = null;
  for (const event of events) {
    switch (event.type) {
      case 'step-start':
        shown = { step: event.step, text: '', reasoning: '' };
        break;
      case 'text-delta':
        if (shown) shown.text += event.delta;
        break;
      case 'reasoning-delta':
        if (shown) shown.reasoning += event.delta;
        break;
      case 'attempt-discarded':
        if (shown?.step === event.step) shown = null;
        break;
      case 'step-finish':
        shown = null;
        break;
      default:
        break;
    }
  }
  if (!shown || shown.step <= committedSteps) return null;
  return shown.text === '' && shown.reasoning === '' ? null : shown;
}
