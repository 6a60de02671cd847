import type { EventPayload } from '../../../src/events/event';
import { uncommittedStepOutput } from '../../../src/turns/uncommitted-step-output';

const usage = { promptTokens: 1, completionTokens: 1, totalTokens: 2 };
const stepStart = (step: number): EventPayload => ({ type: 'step-start', step });
const text = (delta: string): EventPayload => ({ type: 'text-delta', delta });
const reasoning = (delta: string): EventPayload => ({ type: 'reasoning-delta', delta });

describe('what a stopped turn had shown of a step no commit ended', () => {
  it('is the text and reasoning of the last step shown, not of the committed steps before it', () => {
    const events: EventPayload[] = [
      { type: 'turn-start', attempt: 1 },
      stepStart(1),
      text('calling a tool'),
      { type: 'tool-call-start', toolCallId: 'call_0', toolName: 'calculator' },
      { type: 'tool-call-delta', toolCallId: 'call_0', argsTextDelta: '{}' },
      { type: 'tool-call-end', toolCallId: 'call_0', args: {} },
      { type: 'step-finish', step: 1, finishReason: 'tool_calls', usage },
      { type: 'tool-result', toolCallId: 'call_0', result: 4, attempts: 1, durationMs: 1 },
      stepStart(2),
      reasoning('thinking'),
      text('The answer '),
      { type: 'tool-call-start', toolCallId: 'call_1', toolName: 'calculator' },
      { type: 'tool-call-delta', toolCallId: 'call_1', argsTextDelta: '{"expr' },
      text('is'),
    ];
    expect(uncommittedStepOutput(events, 1)).toEqual({ step: 2, text: 'The answer is', reasoning: 'thinking' });
  });

  it('is nothing once the step shown was committed, finished, or streamed nothing', () => {
    // The worker committed step 1 and was stopped before it announced its `step-finish`.
    expect(uncommittedStepOutput([stepStart(1), text('whole')], 1)).toBeNull();
    expect(uncommittedStepOutput([stepStart(1), text('whole'), { type: 'step-finish', step: 1, finishReason: 'stop', usage }], 0)).toBeNull();
    expect(uncommittedStepOutput([stepStart(1), { type: 'tool-call-start', toolCallId: 'call_0', toolName: 'f' }], 0)).toBeNull();
    expect(uncommittedStepOutput([], 0)).toBeNull();
  });

  it('drops what a discarded attempt showed and keeps what the attempt after it showed', () => {
    const events: EventPayload[] = [
      { type: 'turn-start', attempt: 1 },
      stepStart(1),
      text('the dead worker said this'),
      { type: 'turn-start', attempt: 2 },
      { type: 'attempt-discarded', attempt: 1, step: 1 },
    ];
    expect(uncommittedStepOutput(events, 0)).toBeNull();
    expect(uncommittedStepOutput([...events, stepStart(1), text('then this')], 0)).toEqual({ step: 1, text: 'then this', reasoning: '' });
  });

  it('keeps what a SIGKILLed worker had shown when no attempt came after it', () => {
    expect(uncommittedStepOutput([{ type: 'turn-start', attempt: 1 }, stepStart(1), text('said before'), text(' it died')], 0)).toEqual({
      step: 1,
      text: 'said before it died',
      reasoning: '',
    });
  });
});
