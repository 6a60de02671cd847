import { toStorableJson, toStorableText, unstorableTextProblem } from '../../../src/storable/storable-text';

describe('storable text', () => {
  it('names what PostgreSQL would refuse', () => {
    expect(unstorableTextProblem('fine ✓ 😀')).toBeNull();
    expect(unstorableTextProblem('a\u0000b')).toContain('NUL');
    expect(unstorableTextProblem('lone \uD83D here')).toContain('surrogate');
  });

  it('replaces NULs and lone surrogates with U+FFFD and keeps everything else', () => {
    expect(toStorableText('a\u0000b\u0000')).toBe('a\uFFFDb\uFFFD');
    expect(toStorableText('x\uDE00y\uD83D')).toBe('x\uFFFDy\uFFFD');
    expect(toStorableText('pair 😀 stays')).toBe('pair 😀 stays');
  });

  it('makes every string of a JSON value storable, keys included', () => {
    const value = { 'k\u0000': ['v\u0000', 1, null, { deep: 'ok' }], n: 2 };
    expect(toStorableJson(value)).toEqual({ 'k\uFFFD': ['v\uFFFD', 1, null, { deep: 'ok' }], n: 2 });
    expect(toStorableJson('plain')).toBe('plain');
  });
});
