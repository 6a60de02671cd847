const words = new Intl.Segmenter('en', { granularity: 'word' });

/**
 * Splits text into word-ish tokens: each word or symbol with the whitespace before it
 * ("Hello", " world", "."), trailing whitespace as a token of its own. The tokens join back to
 * `text` exactly; Intl's word segmentation keeps emoji sequences and combining marks whole.
 */
export function tokenize(text: string): string[] {
  const tokens: string[] = [];
  let whitespace = '';
  for (const { segment } of words.segment(text)) {
    if (segment.trim() === '') {
      whitespace += segment;
      continue;
    }
    tokens.push(whitespace + segment);
    whitespace = '';
  }
  if (whitespace) tokens.push(whitespace);
  return tokens;
}

/** A word (letters, digits, joined by apostrophes) or any other symbol but whitespace. */
const WORD_OR_SYMBOL = /[\p{L}\p{M}\p{N}_]+(?:['’][\p{L}\p{M}\p{N}_]+)*|[^\s\p{L}\p{M}\p{N}_]/gu;

/**
 * About as many tokens as {@link tokenize} makes, counted with one regular expression: a prompt
 * may hold megabytes of earlier answers, which word segmentation takes seconds to walk.
 */
export function countTokens(text: string): number {
  let count = 0;
  for (WORD_OR_SYMBOL.lastIndex = 0; WORD_OR_SYMBOL.exec(text);) count++;
  return count;
}

const FILLER = ['lorem', 'ipsum', 'dolor', 'sit', 'amet', 'consectetur', 'adipiscing', 'elit', 'sed', 'do', 'eiusmod', 'tempor'];

/**
 * `count` deterministic filler tokens ("lorem", " ipsum", …), each one word so each counts as
 * one token. Generated lazily: a benchmark may ask for a million.
 */
export function* fillerTokens(count: number): Generator<string> {
  for (let i = 0; i < count; i++) yield `${i === 0 ? '' : ' '}${FILLER[i % FILLER.length]}`;
}
