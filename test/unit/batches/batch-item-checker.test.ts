import { BatchItemChecker } from '../../../src/batches/batch-item-checker';

const options = { concurrency: 8, priority: 5, skipInvalid: false };
const checker = (overrides: Partial<ConstructorParameters<typeof BatchItemChecker>[0]> = {}) =>
  new BatchItemChecker({ options, defaults: {}, maxItems: 10, usableTools: new Map([['calculator', { kind: 'builtin' as const }]]), ...overrides });

describe('BatchItemChecker', () => {
  it('names each bad item by its line, storability, nesting and tools included, and refuses the batch', () => {
    const check = checker();
    let deep: unknown = 'x';
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(check.checkValue(1, { messages: ['fine'], tools: ['calculator'] })).toMatchObject({ line: 1 });
    expect(check.checkValue(2, { messages: ['a\u0000b'] })).toBeNull();
    expect(check.checkValue(3, { messages: ['x'], metadata: { deep } })).toBeNull();
    expect(check.checkValue(4, { messages: ['x'], tools: ['nope'] })).toBeNull();
    expect(check.checkLine(5, '{"messages": [')).toBeNull();
    expect(check.refusing).toBe(true);
    expect(() => check.finish()).toThrow(
      expect.objectContaining({
        message: expect.stringMatching(/^invalid batch: line 2: messages\[0\]: must not contain the NUL character .*\(and 3 more\); nothing was stored/),
        details: [
          { line: 2, field: 'messages[0]', message: expect.stringContaining('NUL') },
          { line: 3, field: expect.stringMatching(/^metadata\.deep(\[0\])+$/), message: 'nested deeper than 100 levels' },
          { line: 4, field: 'tools', message: 'unknown tool "nope"' },
          { line: 5, message: 'not valid JSON' },
        ],
      }),
    );
  });

  it('under skipInvalid keeps the rest and lists what it skipped; the hash depends only on what is kept', () => {
    const hashOf = (lines: string[]) => {
      const check = checker({ options: { ...options, skipInvalid: true } });
      lines.forEach((text, index) => check.checkLine(index + 1, text));
      return check.finish();
    };
    const kept = hashOf(['{"messages": ["a"]}', '{"messages": ["b"]}']);
    expect(kept).toEqual({ skipped: [], count: 2, requestHash: expect.stringMatching(/^[0-9a-f]{64}$/) });
    const withBad = hashOf(['{"messages": ["a"]}', '{"messages": ["b"]}', '{"messages": ["\\u0000"]}']);
    expect(withBad.skipped).toEqual([{ line: 3, message: expect.stringMatching(/^messages\[0\]: /) }]);
    expect(withBad.requestHash).toBe(kept.requestHash);
    expect(hashOf(['{"messages": ["b"]}', '{"messages": ["a"]}']).requestHash).not.toBe(kept.requestHash);
  });

  it('counts every non-blank line against maxItems as it comes', () => {
    const check = checker({ maxItems: 2 });
    check.checkLine(1, '{"messages": ["a"]}');
    check.checkLine(2, '');
    check.checkLine(3, 'not json');
    expect(() => check.checkLine(4, '{"messages": ["b"]}')).toThrow('at most 2 items (MAX_BATCH_ITEMS)');
  });
});
