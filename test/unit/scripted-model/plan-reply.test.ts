import type { ChatRequest } from '../../../src/scripted-model/chat-request-schema';
import { planReply, type CompletionPlan, type Delta, type PlannedChunk } from '../../../src/scripted-model/plan-reply';
import type { Step } from '../../../src/scripted-model/scenario-schema';

const request: ChatRequest = {
  model: 'scripted',
  messages: [{ role: 'user', content: 'hi' }],
  tools: [
    { type: 'function', function: { name: 'calculator', parameters: { type: 'object', properties: { expression: { type: 'string' } }, required: ['expression'] } } },
    { type: 'function', function: { name: 'current_time' } },
  ],
};

/** The plan with its (lazy) chunks in an array. */
function plan(step: Step, req: ChatRequest = request): CompletionPlan & { chunks: PlannedChunk[] } {
  const reply = planReply(step, req);
  if (reply.kind !== 'completion') throw new Error(reply.error.message);
  return { ...reply.plan, chunks: [...reply.plan.chunks] };
}
const text = (deltas: Delta[], field: 'content' | 'reasoning_content') => deltas.map((delta) => (field in delta ? (delta as Record<string, string>)[field] : '')).join('');

describe('planReply', () => {
  it('streams reasoning, then text, then tool calls, each token a chunk', () => {
    const { chunks, ending } = plan({ reasoning: 'Think first.', text: 'Then answer.', toolCalls: [{ name: 'f', arguments: { a: 1 } }], argumentChunkChars: 100 });
    const deltas = chunks.map((chunk) => chunk.delta);
    expect(deltas).toEqual([
      { reasoning_content: 'Think' },
      { reasoning_content: ' first' },
      { reasoning_content: '.' },
      { content: 'Then' },
      { content: ' answer' },
      { content: '.' },
      { tool_calls: [{ index: 0, id: 'call_0', type: 'function', function: { name: 'f', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{"a":1}' } }] },
    ]);
    expect(ending).toEqual({ kind: 'finish', finishReason: 'tool_calls' });
  });

  it('groups chunkTokens tokens per chunk and times chunks by their tokens', () => {
    const { chunks } = plan({ text: 'one two three four five', chunkTokens: 2, tokenDelayMs: 10, firstTokenDelayMs: 100 });
    expect(chunks).toEqual([
      { delayMs: 100, tokens: 2, delta: { content: 'one two' } },
      { delayMs: 20, tokens: 2, delta: { content: ' three four' } },
      { delayMs: 10, tokens: 1, delta: { content: ' five' } },
    ]);
  });

  it('prefers text over tokens, and makes N filler tokens otherwise', () => {
    expect(
      text(
        plan({ text: 'exact', tokens: 50 }).chunks.map((c) => c.delta),
        'content',
      ),
    ).toBe('exact');
    expect(plan({ tokens: 50 }).chunks).toHaveLength(50);
    expect(plan({}).chunks).toEqual([]);
  });

  it('cuts the stream short at N tokens, counting tool-call fragments as tokens', () => {
    const cut = plan({ text: 'a b c', toolCalls: [{ name: 'f', arguments: '{"x": 1}' }], argumentChunkChars: 2, cutAfterTokens: 5 });
    expect(cut.ending).toEqual({ kind: 'cut' });
    expect(cut.chunks.map((chunk) => Object.keys(chunk.delta)[0])).toEqual(['content', 'content', 'content', 'tool_calls', 'tool_calls']);
    expect(plan({ tokens: 10, stallAfterTokens: 0 })).toMatchObject({ chunks: [], ending: { kind: 'stall' } });
    expect(plan({ tokens: 10, errorEventAfterTokens: 4 })).toMatchObject({ ending: { kind: 'error-event' } });
    expect(plan({ tokens: 10, errorEventAfterTokens: 4 }).chunks).toHaveLength(4);
  });

  it('makes its chunks lazily, so that a million tokens cost nothing until streamed', () => {
    const reply = planReply({ tokens: 1_000_000 }, request);
    if (reply.kind !== 'completion') throw new Error('expected a completion');
    const first = reply.plan.chunks[Symbol.iterator]().next();
    expect(first.value).toEqual({ delayMs: 0, tokens: 1, delta: { content: 'lorem' } });
  });

  it('overrides or omits the finish reason', () => {
    expect(plan({ text: 'x', finishReason: 'length' }).ending).toEqual({ kind: 'finish', finishReason: 'length' });
    expect(plan({ text: 'x', omitFinishReason: true }).ending).toEqual({ kind: 'finish', finishReason: null });
    expect(plan({ text: 'x' }).ending).toEqual({ kind: 'finish', finishReason: 'stop' });
  });

  it('calls every offered tool (at most maxOfferedCalls) with sampled arguments', () => {
    expect(plan({ toolCalls: 'offered' }).calls).toEqual([
      { id: 'call_0', name: 'calculator', arguments: '{"expression":"example"}' },
      { id: 'call_1', name: 'current_time', arguments: '{}' },
    ]);
    expect(plan({ toolCalls: 'offered', maxOfferedCalls: 1 }).calls).toHaveLength(1);
    expect(plan({ toolCalls: 'offered' }, { ...request, tool_choice: { type: 'function', function: { name: 'current_time' } } }).calls).toEqual([
      { id: 'call_0', name: 'current_time', arguments: '{}' },
    ]);
    expect(planReply({ toolCalls: 'offered' }, { ...request, tools: undefined })).toMatchObject({ kind: 'error', error: { status: 400, code: 'invalid_scenario' } });
  });

  it('sends string arguments verbatim and keeps given ids', () => {
    expect(plan({ toolCalls: [{ name: 'f', arguments: '{"broken": ', id: 'mine' }, { name: 'g' }] }).calls).toEqual([
      { id: 'mine', name: 'f', arguments: '{"broken": ' },
      { id: 'call_1', name: 'g', arguments: '{}' },
    ]);
  });

  it('turns an error step into an OpenAI error with the usual type for its status', () => {
    expect(planReply({ error: { status: 429, retryAfterSeconds: 2 }, text: 'ignored' }, request)).toEqual({
      kind: 'error',
      error: { status: 429, message: 'The scripted model answers 429, as its scenario asked.', type: 'rate_limit_error', param: null, code: null, retryAfterSeconds: 2 },
    });
    expect(planReply({ error: { status: 503, message: 'busy', type: 'overloaded', code: 'x' } }, request)).toMatchObject({
      error: { status: 503, message: 'busy', type: 'overloaded', code: 'x' },
    });
  });
});
