import type { StoredMessage } from '../../../src/store/messages-repository';
import { compactedRequest, type CompactedRequestInput, type CompactionState } from '../../../src/turns/compacted-request';
import type { CompactionStepDeps } from '../../../src/turns/compaction-step';
import { countCorrection } from '../../../src/turns/compaction-plan';
import { estimatePromptTokens } from '../../../src/usage/usage-estimate';

/** No decision below reaches the summary call: its dependencies are never touched. */
const UNUSED = {} as CompactionStepDeps;

const question: StoredMessage = { id: 'msg_1', role: 'user', content: Array.from({ length: 60 }, (_, index) => `word${index}`).join(' '), turnId: 'turn_a' };
const raw = estimatePromptTokens({ messages: [{ role: 'user', content: question.content as string }] });

function input(correction: number, triggerTokens: number): CompactedRequestInput {
  const state: CompactionState = { policy: { triggerTokens }, limits: { triggerTokens, keepRecentTokens: 10 }, summary: null, correction, compacted: new Set() };
  return {
    turn: { id: 'turn_a', conversationId: 'conv_a', userId: 'user_a' },
    attempt: 1,
    step: 1,
    system: null,
    path: [question],
    tools: [],
    state,
    model: 'm',
  } as unknown as CompactedRequestInput;
}

describe("the count correction (the provider's last count over the tokenizer's)", () => {
  it('scales the count the trigger is compared with, not the count recorded for the next ratio', async () => {
    // Under the trigger once corrected down: sent as it is, recorded at the tokenizer's count.
    const halved = await compactedRequest(UNUSED, input(0.5, Math.ceil(raw * 0.75)));
    expect(halved).toMatchObject({ kind: 'ok', counted: raw });
    // The same request corrected up passes the trigger; a lone user message cannot be compacted.
    const doubled = await compactedRequest(UNUSED, input(2, Math.ceil(raw * 1.5)));
    expect(doubled).toMatchObject({ kind: 'failed', code: 'context_length_exceeded' });
    expect(await compactedRequest(UNUSED, input(1, Math.ceil(raw * 1.5)))).toMatchObject({ kind: 'ok', counted: raw });
  });

  it('makes the request it was measured on count what the provider reported, within 0.25–4', () => {
    for (const reported of [raw / 3, raw * 0.9, raw * 1.7, raw * 3.9]) expect(Math.ceil(raw * countCorrection({ reported, counted: raw }))).toBe(Math.ceil(reported));
    expect(countCorrection({ reported: raw * 10, counted: raw })).toBe(4);
    expect(countCorrection({ reported: raw / 10, counted: raw })).toBe(0.25);
    expect(countCorrection({ reported: raw, counted: 0 })).toBe(1);
  });
});
