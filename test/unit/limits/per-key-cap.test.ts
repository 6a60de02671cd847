import { PerKeyCap } from '../../../src/limits/per-key-cap';

describe('PerKeyCap', () => {
  it('gives a key at most its places, each back once, and keys none of each other', () => {
    const cap = new PerKeyCap(2);
    const first = cap.take('key_a');
    const second = cap.take('key_a');
    expect([first, second].every((release) => typeof release === 'function')).toBe(true);
    expect(cap.take('key_a')).toBeNull();
    expect(cap.take('key_b')).not.toBeNull();

    first!();
    first!();
    expect(cap.countOf('key_a')).toBe(1);
    const third = cap.take('key_a');
    expect(third).not.toBeNull();
    expect(cap.take('key_a')).toBeNull();
    second!();
    third!();
    expect(cap.countOf('key_a')).toBe(0);
  });
});
