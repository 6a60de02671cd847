import { findUnstorableValue, MAX_JSON_DEPTH } from '../../../src/storable/storable-json';

describe('findUnstorableValue', () => {
  it('accepts what PostgreSQL stores, including paired surrogates (emoji) and nesting up to the limit', () => {
    expect(findUnstorableValue({ title: 'café 💩', parts: [{ text: 'a\tb\n' }], n: 1, ok: true, none: null })).toBeNull();
    expect(findUnstorableValue(undefined)).toBeNull();
    let nested: unknown = 'leaf';
    for (let i = 0; i < MAX_JSON_DEPTH; i++) nested = [nested];
    expect(findUnstorableValue(nested)).toBeNull();
  });

  it('names the field of a NUL or a lone surrogate, in values and in keys', () => {
    expect(findUnstorableValue({ title: 'a\u0000b' })).toEqual({ field: 'title', message: expect.stringContaining('NUL') });
    expect(findUnstorableValue({ content: [{ text: 'x' }, { text: 'bad \ud83d end' }] })).toEqual({ field: 'content[1].text', message: expect.stringContaining('surrogate') });
    expect(findUnstorableValue({ metadata: { ['\udca9']: 1 } })).toEqual({ field: 'metadata', message: expect.stringContaining('key') });
    expect(findUnstorableValue('\u0000')).toEqual({ field: '(body)', message: expect.any(String) });
  });

  it('refuses nesting past the limit without overflowing the stack itself', () => {
    let nested: unknown = 1;
    for (let i = 0; i < 200_000; i++) nested = { a: nested };
    expect(findUnstorableValue(nested)).toEqual({ field: Array(MAX_JSON_DEPTH).fill('a').join('.'), message: `nested deeper than ${MAX_JSON_DEPTH} levels` });
    expect(findUnstorableValue([[[1]]], 2)).toMatchObject({ field: '[0][0]' });
  });
});
