import { countTokens, fillerTokens, tokenize } from '../../../src/scripted-model/tokenize';

describe('tokenize', () => {
  it('splits into words with their leading space, punctuation apart', () => {
    expect(tokenize('Hello world.')).toEqual(['Hello', ' world', '.']);
    expect(tokenize("It's 4, isn't it?")).toEqual(["It's", ' 4', ',', " isn't", ' it', '?']);
  });

  it('joins back to the text exactly, whitespace and unicode included', () => {
    const texts = ['  leading and trailing  ', 'line one\n\nline two\ttab', 'café naïve 日本語のテキスト', 'emoji 👩‍👩‍👧 family 🇫🇷 flag', 'e\u0301 combining', '', '   '];
    for (const text of texts) expect(tokenize(text).join('')).toBe(text);
    expect(tokenize('👩‍👩‍👧')).toEqual(['👩‍👩‍👧']);
  });

  it('makes deterministic filler, one token per word', () => {
    expect([...fillerTokens(3)]).toEqual(['lorem', ' ipsum', ' dolor']);
    expect(tokenize([...fillerTokens(100)].join(''))).toEqual([...fillerTokens(100)]);
  });

  it('counts as many tokens as it splits Latin text into, without segmenting it', () => {
    for (const text of ['Hello world.', "It's 4, isn't it?", 'line one\n\nline two\ttab', 'café naïve', '', '   ', [...fillerTokens(100)].join('')]) {
      expect(countTokens(text)).toBe(tokenize(text).filter((token) => token.trim() !== '').length);
    }
    // A prompt of megabytes (earlier answers) is counted at once.
    expect(countTokens([...fillerTokens(1_000_000)].join(''))).toBe(1_000_000);
  });
});
