import type { SwitchyardEvent } from '../../../src/events/event';
import { createReplayPlanner } from '../../../src/ui-chat/replay-plan';
import { createUiChunkMapper, startReplay, uiFinishReason, type UiChunk } from '../../../src/ui-chat/ui-message-chunks';

const envelope = { conversationId: 'c', turnId: 'turn_1' };
let seq = 0;
const event = (body: Record<string, unknown>) => ({ ...envelope, seq: ++seq, ...body }) as SwitchyardEvent;

/** A replay as the stream makes it: one pass over the events to plan it, then each mapped, up to its end. */
function replayChunks(input: { isClientTool(toolName: string): boolean; events: SwitchyardEvent[] }): { chunks: UiChunk[]; end: boolean } {
  const planner = createReplayPlanner();
  input.events.forEach((each) => planner.see(each));
  const replay = startReplay({ turnId: 'turn_1', isClientTool: input.isClientTool, plan: planner.plan() });
  const chunks: UiChunk[] = [];
  for (const each of input.events) {
    const mapped = replay.map(each);
    chunks.push(...mapped.chunks);
    if (mapped.end) return { chunks, end: true };
  }
  return { chunks, end: false };
}

describe('UI message chunks', () => {
  it('marks server tools providerExecuted and leaves client tools for onToolCall; ends at turn-waiting with tool-calls', () => {
    const mapper = createUiChunkMapper({ turnId: 'turn_1', isClientTool: (name) => name === 'ask' });
    const chunks = [
      event({ type: 'step-start', step: 1 }),
      event({ type: 'text-delta', delta: 'Let me check' }),
      event({ type: 'tool-call-start', toolCallId: 'a', toolName: 'calc' }),
      event({ type: 'tool-call-start', toolCallId: 'b', toolName: 'ask' }),
      event({ type: 'tool-call-delta', toolCallId: 'unseen', argsTextDelta: '{' }),
      event({ type: 'tool-call-end', toolCallId: 'a', args: { x: 1 } }),
      event({ type: 'tool-call-end', toolCallId: 'b', args: null, error: { code: 'invalid_arguments', message: 'bad' } }),
    ].flatMap((each) => mapper.map(each).chunks);
    expect(chunks).toEqual([
      { type: 'start-step' },
      { type: 'text-start', id: 't2' },
      { type: 'text-delta', id: 't2', delta: 'Let me check' },
      { type: 'text-end', id: 't2' },
      { type: 'tool-input-start', toolCallId: 'a', toolName: 'calc', providerExecuted: true },
      { type: 'tool-input-start', toolCallId: 'b', toolName: 'ask' },
      { type: 'tool-input-available', toolCallId: 'a', toolName: 'calc', input: { x: 1 }, providerExecuted: true },
      { type: 'tool-input-error', toolCallId: 'b', toolName: 'ask', input: null, errorText: 'invalid_arguments: bad' },
    ]);
    expect(mapper.map(event({ type: 'turn-waiting', toolCallIds: ['b'] }))).toEqual({
      chunks: [{ type: 'finish', finishReason: 'tool-calls', messageMetadata: { turnStatus: 'waiting_tools' } }],
      end: true,
    });
  });

  it('names finish reasons as the AI SDK does, maps errors and cancellations to error and abort, and gives the message its turn status', () => {
    expect(['stop', 'length', 'tool_calls', 'content_filter', 'max_steps'].map(uiFinishReason)).toEqual(['stop', 'length', 'tool-calls', 'content-filter', 'other']);
    const mapper = createUiChunkMapper({ turnId: 'turn_1', isClientTool: () => false });
    expect(mapper.map(event({ type: 'turn-finish', finishReason: 'max_steps', usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 } })).chunks).toEqual([
      { type: 'finish', finishReason: 'other', messageMetadata: { turnStatus: 'completed' } },
    ]);
    expect(mapper.map(event({ type: 'turn-error', error: { code: 'provider_error', message: 'no' } })).chunks).toEqual([
      { type: 'error', errorText: 'provider_error: no' },
      { type: 'finish', finishReason: 'error', messageMetadata: { turnStatus: 'failed' } },
    ]);
    expect(mapper.map(event({ type: 'turn-cancelled' }))).toEqual({
      chunks: [
        { type: 'message-metadata', messageMetadata: { turnStatus: 'cancelled' } },
        { type: 'abort', reason: 'cancelled' },
      ],
      end: true,
    });
  });

  it('labels the tool processing of the step a stream starts in, before any step-start of its own', () => {
    const mapper = createUiChunkMapper({ turnId: 'turn_1', isClientTool: () => true, step: 3 });
    const chunks = [
      event({ type: 'tool-result', toolCallId: 'c', result: 'yes', attempts: 1, durationMs: 5 }),
      event({ type: 'tool_processing_complete', results: 1, failed: 0 }),
    ].flatMap((each) => mapper.map(each).chunks);
    expect(chunks.at(-1)).toEqual({ type: 'data-tool-processing', id: 'turn_1:3', data: { status: 'complete', step: 3, results: 1, failed: 0 } });
  });

  it("gives a stream that starts inside a step (a POST answering client tools) that step's tool-processing part", () => {
    const mapper = createUiChunkMapper({ turnId: 'turn_1', isClientTool: () => true, step: 2 });
    const chunks = [
      event({ type: 'tool_processing_complete', results: 1, failed: 0 }),
      event({ type: 'step-start', step: 3 }),
      event({ type: 'tool_processing_start', toolCalls: [{ toolCallId: 'c', toolName: 'ask', args: {} }] }),
    ].flatMap((each) => mapper.map(each).chunks);
    expect(chunks.filter((chunk) => chunk.type === 'data-tool-processing')).toEqual([
      { type: 'data-tool-processing', id: 'turn_1:2', data: { status: 'complete', step: 2, results: 1, failed: 0 } },
      { type: 'data-tool-processing', id: 'turn_1:3', data: { status: 'start', step: 3 } },
    ]);
  });

  it('leaves a discarded step out of a replay, keeping what came before it and the step run again', () => {
    const events = [
      event({ type: 'step-start', step: 1 }),
      event({ type: 'text-delta', delta: 'kept' }),
      event({ type: 'step-finish', step: 1, finishReason: 'tool_calls', usage: { promptTokens: 1, completionTokens: 1, totalTokens: 2 } }),
      event({ type: 'step-start', step: 2 }),
      event({ type: 'text-delta', delta: 'lost' }),
      event({ type: 'attempt-discarded', attempt: 2, step: 2 }),
      event({ type: 'turn-start', attempt: 2 }),
      event({ type: 'step-start', step: 2 }),
      event({ type: 'text-delta', delta: 'again' }),
    ];
    const planner = createReplayPlanner();
    events.forEach((each) => planner.see(each));
    expect(events.filter(planner.plan().shows).map((each) => (each.type === 'text-delta' ? each.delta : each.type))).toEqual([
      'step-start',
      'kept',
      'step-finish',
      'turn-start',
      'step-start',
      'again',
    ]);
  });

  it('replays a turn that went on after a client answer without ending at its wait, and without offering the answered call again', () => {
    const events = [
      event({ type: 'step-start', step: 1 }),
      event({ type: 'tool-call-start', toolCallId: 'c', toolName: 'ask' }),
      event({ type: 'tool-call-end', toolCallId: 'c', args: {} }),
      event({ type: 'tool-call-request', toolCallId: 'c', toolName: 'ask', args: {} }),
      event({ type: 'turn-waiting', toolCallIds: ['c'] }),
      event({ type: 'tool-result', toolCallId: 'c', result: 'yes', attempts: 1, durationMs: 5 }),
      event({ type: 'step-start', step: 2 }),
      event({ type: 'text-delta', delta: 'ok' }),
    ];
    const replay = replayChunks({ isClientTool: (name) => name === 'ask', events });
    expect(replay.end).toBe(false);
    expect(replay.chunks.map((chunk) => chunk.type)).toEqual(['start-step', 'tool-input-start', 'tool-output-available', 'start-step', 'text-start', 'text-delta']);
    // Waiting now: the replay ends there, and the call is offered.
    const waiting = replayChunks({ isClientTool: (name) => name === 'ask', events: events.slice(0, 5) });
    expect(waiting.end).toBe(true);
    expect(waiting.chunks.map((chunk) => chunk.type)).toEqual(['start-step', 'tool-input-start', 'tool-input-available', 'finish']);
  });

  it("asks for approval after the call's input, shows a denial as output-denied instead of its error, and marks a wait on approvals only", () => {
    const mapper = createUiChunkMapper({ turnId: 'turn_1', isClientTool: () => false });
    const chunks = [
      event({ type: 'tool-call-start', toolCallId: 'a', toolName: 'transfer' }),
      event({ type: 'tool-call-end', toolCallId: 'a', args: { to: 'ann' } }),
      event({ type: 'tool-approval-request', toolCallId: 'a', toolName: 'transfer', args: { to: 'ann' }, approvalId: 'appr_1', expiresAt: '2030-01-01T00:00:00.000Z' }),
    ].flatMap((each) => mapper.map(each).chunks);
    expect(chunks.at(-1)).toEqual({ type: 'tool-approval-request', approvalId: 'appr_1', toolCallId: 'a' });
    expect(mapper.map(event({ type: 'turn-waiting', toolCallIds: ['a'] })).chunks).toEqual([
      { type: 'finish', finishReason: 'tool-calls', messageMetadata: { turnStatus: 'waiting_approval' } },
    ]);
    expect(mapper.map(event({ type: 'tool-approval-response', toolCallId: 'a', approved: false, reason: 'no' })).chunks).toEqual([{ type: 'tool-output-denied', toolCallId: 'a' }]);
    expect(mapper.map(event({ type: 'tool-result', toolCallId: 'a', error: { code: 'denied', message: 'no' }, attempts: 0, durationMs: 0 })).chunks).toEqual([]);
  });

  it('does not ask again for an approval a replay shows was given; an approved call then shows its output', () => {
    const events = [
      event({ type: 'step-start', step: 1 }),
      event({ type: 'tool-call-start', toolCallId: 'a', toolName: 'transfer' }),
      event({ type: 'tool-call-end', toolCallId: 'a', args: {} }),
      event({ type: 'tool-approval-request', toolCallId: 'a', toolName: 'transfer', args: {}, approvalId: 'appr_1', expiresAt: '2030-01-01T00:00:00.000Z' }),
      event({ type: 'turn-waiting', toolCallIds: ['a'] }),
      event({ type: 'tool-approval-response', toolCallId: 'a', approved: true }),
      event({ type: 'tool-result', toolCallId: 'a', result: 1, attempts: 1, durationMs: 3 }),
    ];
    const replay = replayChunks({ isClientTool: () => false, events });
    expect(replay.end).toBe(false);
    expect(replay.chunks.map((chunk) => chunk.type)).toEqual(['start-step', 'tool-input-start', 'tool-input-available', 'tool-output-available']);
  });

  it('offers a client call to onToolCall when it is asked of clients: after its approval, once, with the arguments it runs with', () => {
    const mapper = createUiChunkMapper({ turnId: 'turn_1', isClientTool: (name) => name === 'sign' });
    const first = [
      event({ type: 'tool-call-start', toolCallId: 's', toolName: 'sign' }),
      event({ type: 'tool-call-end', toolCallId: 's', args: { doc: 'a' } }),
      event({ type: 'tool_processing_start', toolCalls: [{ toolCallId: 's', toolName: 'sign', args: { doc: 'a' } }] }),
      event({ type: 'tool-approval-request', toolCallId: 's', toolName: 'sign', args: { doc: 'a' }, approvalId: 'appr_1', expiresAt: '2030-01-01T00:00:00.000Z' }),
    ].flatMap((each) => mapper.map(each).chunks);
    expect(first.map((chunk) => chunk.type)).toEqual(['tool-input-start', 'data-tool-processing', 'tool-approval-request']);
    expect(mapper.map(event({ type: 'turn-waiting', toolCallIds: ['s'] })).chunks).toEqual([
      { type: 'finish', finishReason: 'tool-calls', messageMetadata: { turnStatus: 'waiting_approval' } },
    ]);

    // The POST carrying the approval streams from there on.
    const after = createUiChunkMapper({ turnId: 'turn_1', isClientTool: (name) => name === 'sign', step: 1 });
    const asked = [
      event({ type: 'tool-approval-response', toolCallId: 's', approved: true }),
      event({ type: 'tool-call-request', toolCallId: 's', toolName: 'sign', args: { doc: 'b' } }),
      event({ type: 'tool-call-request', toolCallId: 's', toolName: 'sign', args: { doc: 'b' } }),
    ].flatMap((each) => after.map(each).chunks);
    expect(asked).toEqual([{ type: 'tool-input-available', toolCallId: 's', toolName: 'sign', input: { doc: 'b' } }]);
    expect(after.map(event({ type: 'turn-waiting', toolCallIds: ['s'] }))).toEqual({
      chunks: [{ type: 'finish', finishReason: 'tool-calls', messageMetadata: { turnStatus: 'waiting_tools' } }],
      end: true,
    });
  });

  it('carries a fallback as a data-provider-fallback part, closing the text before it', () => {
    const mapper = createUiChunkMapper({ turnId: 'turn_1', isClientTool: () => false });
    const from = { provider: 'first', model: 'a' };
    const to = { provider: 'second', model: 'b' };
    const chunks = [
      event({ type: 'step-start', step: 1 }),
      event({ type: 'text-delta', delta: 'Half' }),
      event({ type: 'attempt-discarded', attempt: 1, step: 1 }),
      event({ type: 'provider-fallback', step: 1, from, to, reason: 'connection' }),
      event({ type: 'step-start', step: 1 }),
    ].flatMap((each) => mapper.map(each).chunks);
    expect(chunks.filter((chunk) => chunk.type.startsWith('data-') || chunk.type === 'start-step' || chunk.type === 'text-end').map((chunk) => chunk.type)).toEqual([
      'start-step',
      'text-end',
      'data-attempt-discarded',
      'data-provider-fallback',
      'start-step',
    ]);
    expect(chunks).toContainEqual({ type: 'data-provider-fallback', data: { step: 1, from, to, reason: 'connection' } });
  });

  it('carries a finished compaction as a data-compaction part before the step it came before', () => {
    const mapper = createUiChunkMapper({ turnId: 'turn_1', isClientTool: () => false });
    const chunks = [
      event({ type: 'compaction-start', compactionId: 'cmp_1' }),
      event({ type: 'compaction-finish', compactionId: 'cmp_1', tokensBefore: 900, tokensAfter: 100 }),
      event({ type: 'step-start', step: 1 }),
    ].flatMap((each) => mapper.map(each).chunks);
    expect(chunks.filter((chunk) => chunk.type.startsWith('data-') || chunk.type === 'start-step')).toEqual([
      { type: 'data-compaction', data: { compactionId: 'cmp_1', tokensBefore: 900, tokensAfter: 100 } },
      { type: 'start-step' },
    ]);
  });
});
