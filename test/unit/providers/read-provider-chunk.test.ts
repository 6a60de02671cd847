import { ProviderError } from '../../../src/providers/provider-error';
import { readProviderChunk } from '../../../src/providers/read-provider-chunk';

const chunk = (delta: object, extra: object = {}) => ({ id: 'c', object: 'chat.completion.chunk', choices: [{ index: 0, delta, ...extra }] });

describe('readProviderChunk', () => {
  it('reads reasoning (under either name) before text', () => {
    expect(readProviderChunk(chunk({ reasoning_content: 'hmm', content: 'Hi' })).output).toEqual([
      { type: 'reasoning', delta: 'hmm' },
      { type: 'text', delta: 'Hi' },
    ]);
    expect(readProviderChunk(chunk({ reasoning: 'so' })).output).toEqual([{ type: 'reasoning', delta: 'so' }]);
    expect(readProviderChunk(chunk({ role: 'assistant', content: '' })).output).toEqual([]);
  });

  it('passes tool-call fragments on with only the fields they carry', () => {
    const read = readProviderChunk(
      chunk({
        tool_calls: [
          { index: 0, id: 'call_0', type: 'function', function: { name: 'calculator', arguments: '' } },
          { index: 1, function: { arguments: '{"a"' } },
        ],
      }),
    );
    expect(read.output).toEqual([
      { type: 'tool-call-fragment', index: 0, id: 'call_0', name: 'calculator' },
      { type: 'tool-call-fragment', index: 1, argumentsDelta: '{"a"' },
    ]);
  });

  it('reads the finish reason and the usage, which come in chunks of their own', () => {
    expect(readProviderChunk(chunk({}, { finish_reason: 'tool_calls' }))).toEqual({ output: [], finishReason: 'tool_calls' });
    expect(readProviderChunk({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 7, total_tokens: 12 } })).toEqual({
      output: [],
      usage: { promptTokens: 5, completionTokens: 7, totalTokens: 12 },
    });
    expect(readProviderChunk({ usage: { prompt_tokens: 5, completion_tokens: 7 } }).usage).toEqual({ promptTokens: 5, completionTokens: 7, totalTokens: 12 });
  });

  it('takes a chunk carrying "error": null as the ordinary chunk it is', () => {
    expect(readProviderChunk({ ...chunk({ content: 'ok' }), error: null }).output).toEqual([{ type: 'text', delta: 'ok' }]);
  });

  it('refuses a chunk of the wrong shape as a retryable stream error', () => {
    let thrown: unknown;
    try {
      readProviderChunk({ choices: [{ delta: { content: 42 } }] });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ProviderError);
    expect(thrown).toMatchObject({ kind: 'stream_error', retryable: true });
  });
});
