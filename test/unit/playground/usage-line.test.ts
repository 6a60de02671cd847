import { usageLine } from '../../../src/playground/app/usage-line';

describe("the playground's usage line", () => {
  it('gives tokens and two significant digits of a priced turn, cents past a dollar', () => {
    expect(usageLine({ totalTokens: 1234, costUsd: 0.002134 })).toBe('1,234 tokens · $0.0021');
    expect(usageLine({ totalTokens: 2_500_000, costUsd: 12.345 })).toBe('2,500,000 tokens · $12.35');
  });

  it('gives the tokens alone when the turn cost nothing (an unpriced model)', () => {
    expect(usageLine({ totalTokens: 87, costUsd: 0 })).toBe('87 tokens');
    expect(usageLine({ totalTokens: 1, costUsd: 0 })).toBe('1 token');
  });
});
