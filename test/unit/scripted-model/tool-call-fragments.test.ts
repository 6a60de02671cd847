import { splitArguments } from '../../../src/scripted-model/split-arguments';
import { fragmentToolCalls, type ToolCallFragment } from '../../../src/scripted-model/tool-call-fragments';

/** What a client does: concatenate the pieces of each index. */
function reassemble(fragments: ToolCallFragment[]) {
  const calls: { id?: string; name?: string; arguments: string }[] = [];
  for (const fragment of fragments) {
    const call = (calls[fragment.index] ??= { arguments: '' });
    if (fragment.id) call.id = fragment.id;
    if (fragment.function.name) call.name = fragment.function.name;
    call.arguments += fragment.function.arguments;
  }
  return calls;
}

describe('splitArguments', () => {
  const text = JSON.stringify({ q: 'café \u00e9 \\u00e9 "quoted" 😀', n: [1, 2.5], nested: { ok: true } });

  it('reassembles exactly when split at every offset, one or two at a time', () => {
    for (let a = 0; a <= text.length; a++) {
      expect(splitArguments(text, { every: 7, at: [a] }).join('')).toBe(text);
      for (let b = a; b <= text.length; b += 5) expect(splitArguments(text, { every: 7, at: [b, a] }).join('')).toBe(text);
    }
  });

  it('splits at the given offsets, ignoring duplicates and offsets outside the text', () => {
    expect(splitArguments('{"a":"\\u00e9"}', { every: 7, at: [9, 2, 2, 0, 99] })).toEqual(['{"', 'a":"\\u0', '0e9"}']);
  });

  it('splits every N characters', () => {
    expect(splitArguments('abcdefghij', { every: 4 })).toEqual(['abcd', 'efgh', 'ij']);
    expect(splitArguments('abcd', { every: 4 })).toEqual(['abcd']);
    expect(splitArguments('', { every: 4 })).toEqual([]);
  });
});

describe('fragmentToolCalls', () => {
  const calls = [
    { id: 'call_0', name: 'weather', arguments: '{"city":"Paris"}' },
    { id: 'call_1', name: 'time', arguments: '{"tz":"UTC"}' },
  ];

  it('openai style: the first fragment has id, type, name and empty arguments; later ones only index and arguments', () => {
    const fragments = fragmentToolCalls(calls, { argumentChunkChars: 10 });
    expect(fragments).toEqual([
      { index: 0, id: 'call_0', type: 'function', function: { name: 'weather', arguments: '' } },
      { index: 0, function: { arguments: '{"city":"P' } },
      { index: 0, function: { arguments: 'aris"}' } },
      { index: 1, id: 'call_1', type: 'function', function: { name: 'time', arguments: '' } },
      { index: 1, function: { arguments: '{"tz":"UTC' } },
      { index: 1, function: { arguments: '"}' } },
    ]);
  });

  it('vllm style: the first fragment already carries arguments; ids can be left out', () => {
    const fragments = fragmentToolCalls([calls[0]!], { fragmentStyle: 'vllm', splitArgumentsAt: [3], omitIds: true });
    expect(fragments).toEqual([
      { index: 0, type: 'function', function: { name: 'weather', arguments: '{"c' } },
      { index: 0, function: { arguments: 'ity":"Paris"}' } },
    ]);
  });

  it('interleaves parallel calls round-robin, and they still reassemble by index', () => {
    const three = [...calls, { id: 'own-id', name: 'long', arguments: JSON.stringify({ text: 'x'.repeat(40) }) }];
    const fragments = fragmentToolCalls(three, { interleave: true, argumentChunkChars: 5 });
    expect(fragments.slice(0, 6).map((fragment) => fragment.index)).toEqual([0, 1, 2, 0, 1, 2]);
    expect(reassemble(fragments)).toEqual(three);
    expect(fragments.filter((fragment) => fragment.id !== undefined)).toHaveLength(3);
  });

  it('sends a call with empty arguments as its first fragment alone', () => {
    expect(fragmentToolCalls([{ id: 'c', name: 'f', arguments: '' }])).toEqual([{ index: 0, id: 'c', type: 'function', function: { name: 'f', arguments: '' } }]);
  });

  it('splits names over two fragments and sends the id with the second (split-name)', () => {
    const fragments = fragmentToolCalls(calls, { fragmentStyle: 'split-name', argumentChunkChars: 100 });
    expect(fragments.slice(0, 3)).toEqual([
      { index: 0, type: 'function', function: { name: 'weat', arguments: '' } },
      { index: 0, id: 'call_0', function: { name: 'her', arguments: '' } },
      { index: 0, function: { arguments: '{"city":"Paris"}' } },
    ]);
    const joined = fragments
      .filter((fragment) => fragment.index === 1)
      .map((fragment) => fragment.function.name ?? '')
      .join('');
    expect(joined).toBe('time');
  });
});
