import { ToolCallAssembler } from '../../../src/turns/tool-call-assembler';

describe('ToolCallAssembler', () => {
  it('assembles OpenAI-style fragments: id and name first, arguments in pieces; announced when the arguments begin', () => {
    const assembler = new ToolCallAssembler((i) => `gen_${i}`);
    expect(assembler.push({ index: 0, id: 'call_a', name: 'weather', argumentsDelta: '' })).toEqual([]);
    const out = [...assembler.push({ index: 0, argumentsDelta: '{"city":' }), ...assembler.push({ index: 0, argumentsDelta: '"Paris"}' })];
    expect(out).toEqual([
      { type: 'start', toolCallId: 'call_a', toolName: 'weather' },
      { type: 'delta', toolCallId: 'call_a', argsTextDelta: '{"city":' },
      { type: 'delta', toolCallId: 'call_a', argsTextDelta: '"Paris"}' },
    ]);
    expect(assembler.finish()).toEqual([]);
    expect(assembler.calls()).toEqual([{ id: 'call_a', type: 'function', function: { name: 'weather', arguments: '{"city":"Paris"}' } }]);
  });

  it('joins a name split over fragments, and takes an id that comes after the name', () => {
    const assembler = new ToolCallAssembler((i) => `gen_${i}`);
    expect(assembler.push({ index: 0, name: 'get_' })).toEqual([]);
    expect(assembler.push({ index: 0, name: 'wea' })).toEqual([]);
    expect(assembler.push({ index: 0, id: 'call_late', name: 'ther' })).toEqual([]);
    expect(assembler.push({ index: 0, argumentsDelta: '{}' })).toEqual([
      { type: 'start', toolCallId: 'call_late', toolName: 'get_weather' },
      { type: 'delta', toolCallId: 'call_late', argsTextDelta: '{}' },
    ]);
    // Once the call is announced its name and id stay what they were announced as.
    expect(assembler.push({ index: 0, id: 'other', name: 'x' })).toEqual([]);
    expect(assembler.calls()).toEqual([{ id: 'call_late', type: 'function', function: { name: 'get_weather', arguments: '{}' } }]);
  });

  it('announces a call without arguments when the stream finishes', () => {
    const assembler = new ToolCallAssembler((i) => `gen_${i}`);
    expect(assembler.push({ index: 0, name: 'current_' })).toEqual([]);
    expect(assembler.push({ index: 0, name: 'time' })).toEqual([]);
    expect(assembler.finish()).toEqual([{ type: 'start', toolCallId: 'gen_0', toolName: 'current_time' }]);
    expect(assembler.calls()).toEqual([{ id: 'gen_0', type: 'function', function: { name: 'current_time', arguments: '' } }]);
  });

  it('keeps interleaved parallel calls apart and orders them by index', () => {
    const assembler = new ToolCallAssembler((i) => `gen_${i}`);
    assembler.push({ index: 1, id: 'b', name: 'two', argumentsDelta: '{"x"' });
    assembler.push({ index: 0, id: 'a', name: 'one' });
    assembler.push({ index: 1, argumentsDelta: ':1}' });
    assembler.push({ index: 0, argumentsDelta: '{}' });
    assembler.finish();
    expect(assembler.calls().map((call) => [call.id, call.function.arguments])).toEqual([
      ['a', '{}'],
      ['b', '{"x":1}'],
    ]);
  });

  it('gives an id to a call that has none and holds arguments that precede the name', () => {
    const assembler = new ToolCallAssembler((i) => `gen_${i}`);
    expect(assembler.push({ index: 0, argumentsDelta: '{"a"' })).toEqual([]);
    expect(assembler.push({ index: 0, name: 'late' })).toEqual([
      { type: 'start', toolCallId: 'gen_0', toolName: 'late' },
      { type: 'delta', toolCallId: 'gen_0', argsTextDelta: '{"a"' },
    ]);
  });

  it('reassembles arguments split at every position, including inside unicode escapes', () => {
    const text = JSON.stringify({ q: 'caf\u00e9 \\u00e9 "quoted"', n: [1, 2.5], nested: { ok: true } });
    for (let cut = 0; cut <= text.length; cut++) {
      const assembler = new ToolCallAssembler(() => 'id');
      assembler.push({ index: 0, id: 'c', name: 'f', argumentsDelta: text.slice(0, cut) });
      assembler.push({ index: 0, argumentsDelta: text.slice(cut) });
      assembler.finish();
      expect(JSON.parse(assembler.calls()[0]!.function.arguments)).toEqual(JSON.parse(text));
    }
  });

  it('reassembles two interleaved calls split at every pair of positions, announcing each delta once', () => {
    const texts = [JSON.stringify({ text: '{"not": json} [x]', emoji: '\ud83d\ude00 \u00e9' }), '{"a":"}","b":"{"}'];
    for (let cut = 0; cut <= texts[0]!.length; cut++) {
      const assembler = new ToolCallAssembler(() => 'id');
      const pieces = texts.map((text) => [text.slice(0, cut), text.slice(cut)]);
      const out = [
        // vLLM style: the first fragment already carries the first piece of arguments.
        ...assembler.push({ index: 0, id: 'a', name: 'f', argumentsDelta: pieces[0]![0] }),
        ...assembler.push({ index: 1, id: 'b', name: 'g', argumentsDelta: pieces[1]![0] }),
        ...assembler.push({ index: 0, argumentsDelta: pieces[0]![1] }),
        ...assembler.push({ index: 1, argumentsDelta: pieces[1]![1] }),
        ...assembler.finish(),
      ];
      expect(assembler.calls().map((call) => call.function.arguments)).toEqual(texts);
      for (const [id, text] of [
        ['a', texts[0]],
        ['b', texts[1]],
      ] as const) {
        const deltas = out.flatMap((each) => (each.type === 'delta' && each.toolCallId === id ? [each.argsTextDelta] : []));
        expect(deltas.join('')).toBe(text);
      }
    }
  });

  it("replaces an id the turn's earlier steps used, or that an earlier call of the step has, by a generated one", () => {
    const assembler = new ToolCallAssembler((i) => `gen_${i}`, ['call_0']);
    expect(assembler.push({ index: 0, id: 'call_0', name: 'f', argumentsDelta: '{}' })[0]).toEqual({ type: 'start', toolCallId: 'gen_0', toolName: 'f' });
    assembler.push({ index: 1, id: 'call_1', name: 'f', argumentsDelta: '{}' });
    assembler.push({ index: 2, id: 'call_1', name: 'g', argumentsDelta: '{}' });
    // Later fragments that repeat the provider's id still belong to their call.
    assembler.push({ index: 0, id: 'call_0', argumentsDelta: '' });
    assembler.finish();
    expect(assembler.calls().map((call) => [call.id, call.function.name])).toEqual([
      ['gen_0', 'f'],
      ['call_1', 'f'],
      ['gen_2', 'g'],
    ]);
  });
});
