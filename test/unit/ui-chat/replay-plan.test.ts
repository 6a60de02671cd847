import type { SwitchyardEvent } from '../../../src/events/event';
import { createReplayPlanner } from '../../../src/ui-chat/replay-plan';

const envelope = { conversationId: 'c', turnId: 'turn_1' };
let seq = 0;
const event = (body: Record<string, unknown>) => ({ ...envelope, seq: ++seq, ...body }) as SwitchyardEvent;
const finish = (step: number) => event({ type: 'step-finish', step, finishReason: 'tool_calls', usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 } });

function planOf(events: SwitchyardEvent[]) {
  const planner = createReplayPlanner();
  events.forEach((each) => planner.see(each));
  return planner.plan();
}

const shown = (events: SwitchyardEvent[]) => {
  const plan = planOf(events);
  return events.filter(plan.shows).map((each) => (each.type === 'text-delta' ? each.delta : each.type));
};

describe('the plan of a UI message stream replay', () => {
  it('leaves out every discarded run of a step, keeping the run that stayed', () => {
    const events = [
      event({ type: 'step-start', step: 1 }),
      event({ type: 'text-delta', delta: 'first run' }),
      event({ type: 'attempt-discarded', attempt: 1, step: 1 }),
      event({ type: 'step-start', step: 1 }),
      event({ type: 'text-delta', delta: 'second run' }),
      event({ type: 'attempt-discarded', attempt: 2, step: 1 }),
      event({ type: 'step-start', step: 1 }),
      event({ type: 'text-delta', delta: 'third run' }),
    ];
    expect(shown(events)).toEqual(['step-start', 'third run']);
  });

  it('ends at a wait that a discard made the last word again, and not at one the turn went on from', () => {
    const waited = [
      event({ type: 'step-start', step: 1 }),
      event({ type: 'tool-call-request', toolCallId: 'c', toolName: 'ask', args: {} }),
      finish(1),
      event({ type: 'turn-waiting', toolCallIds: ['c'] }),
    ];
    const wentOn = [...waited, event({ type: 'tool-result', toolCallId: 'c', result: 'yes', attempts: 1, durationMs: 5 }), event({ type: 'step-start', step: 2 })];
    expect(shown(wentOn)).not.toContain('turn-waiting');
    expect(planOf(wentOn).answered).toEqual(new Set(['c']));

    // The step that followed the wait (without an answer: a restart) was discarded.
    const discarded = [...waited, event({ type: 'step-start', step: 2 }), event({ type: 'text-delta', delta: 'lost' }), event({ type: 'attempt-discarded', attempt: 1, step: 2 })];
    expect(shown(discarded)).toEqual(['step-start', 'tool-call-request', 'step-finish', 'turn-waiting']);
  });

  it('forgets an answer or an approval inside a discarded run, and keeps a discard of nothing out of the replay', () => {
    const events = [
      event({ type: 'step-start', step: 1 }),
      event({ type: 'tool-approval-response', toolCallId: 'a', approved: true }),
      event({ type: 'tool-result', toolCallId: 'a', result: 1, attempts: 1, durationMs: 3 }),
      event({ type: 'attempt-discarded', attempt: 1, step: 1 }),
      event({ type: 'attempt-discarded', attempt: 1, step: 7 }),
      event({ type: 'tool-approval-response', toolCallId: 'b', approved: true }),
    ];
    const plan = planOf(events);
    expect([plan.answered, plan.approved]).toEqual([new Set(), new Set(['b'])]);
    expect(shown(events)).toEqual(['tool-approval-response']);
  });
});
