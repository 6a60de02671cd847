import { costOf } from '../../../src/usage/call-cost';
import { estimatePromptTokens, StreamedTokenTally } from '../../../src/usage/usage-estimate';

describe("a call's cost", () => {
  it('prices uncached prompt, cached prompt and completion tokens per million', () => {
    const tokens = { promptTokens: 1_000_000, cachedPromptTokens: 400_000, completionTokens: 200_000, reasoningTokens: 50_000 };
    expect(costOf(tokens, { input: 3, cachedInput: 0.3, output: 15 })).toEqual({ costUsd: 0.6 * 3 + 0.4 * 0.3 + 0.2 * 15, priced: true });
  });

  it('costs 0 and says unpriced without a price', () => {
    expect(costOf({ promptTokens: 10, cachedPromptTokens: 0, completionTokens: 10, reasoningTokens: 0 }, undefined)).toEqual({ costUsd: 0, priced: false });
  });
});

describe('the estimate of a cut call', () => {
  it('counts what was sent with a tokenizer, more for a longer request', () => {
    const short = estimatePromptTokens({ messages: [{ role: 'user', content: 'hi' }] });
    const long = estimatePromptTokens({ messages: [{ role: 'user', content: 'hi '.repeat(100) }] });
    expect(short).toBeGreaterThan(0);
    expect(long).toBeGreaterThan(short + 50);
  });

  it('counts what streamed, however the deltas and the readings fall', () => {
    const tally = new StreamedTokenTally();
    tally.add('Hello');
    tally.add(' world');
    tally.add('');
    expect(tally.completionTokens).toBe(2);
    expect(tally.completionTokens).toBe(2);
    tally.add(' again');
    expect(tally.completionTokens).toBe(3);
  });
});
