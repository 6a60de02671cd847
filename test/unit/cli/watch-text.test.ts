import type { SwitchyardEvent } from '@switchyard/protocol';
import { WatchText, type WatchFrame } from '../../../src/cli/watch-text';

let seq = 0;
const event = (body: Record<string, unknown>): WatchFrame => ({ type: 'event', event: { conversationId: 'conv_1', turnId: 'turn_1', seq: ++seq, ...body } as SwitchyardEvent });
const usage = { promptTokens: 10, completionTokens: 5, totalTokens: 15 };

/** `watch` as text: what a person reads of a conversation's frames. */
describe('WatchText', () => {
  const render = (frames: WatchFrame[]) => {
    const text = new WatchText();
    return frames.map((frame) => text.frame(frame)).join('');
  };

  it('streams the text as it comes, shows tool calls as cards with their results, and each status on a line of its own', () => {
    const output = render([
      { type: 'subscribed', conversationId: 'conv_1', after: 0 },
      event({ type: 'turn-start', attempt: 1 }),
      event({ type: 'step-start', step: 1 }),
      event({ type: 'text-delta', delta: 'Let me ' }),
      event({ type: 'text-delta', delta: 'add.' }),
      event({ type: 'tool-call-start', toolCallId: 'call_0', toolName: 'calculator' }),
      event({ type: 'tool-call-delta', toolCallId: 'call_0', argsTextDelta: '{"expression":' }),
      event({ type: 'tool-call-end', toolCallId: 'call_0', args: { expression: '2+2' } }),
      event({ type: 'step-finish', step: 1, finishReason: 'tool_calls', usage }),
      event({ type: 'tool_processing_start', toolCalls: [{ toolCallId: 'call_0', toolName: 'calculator', args: { expression: '2+2' } }] }),
      event({ type: 'tool-result', toolCallId: 'call_0', result: { value: 4 }, attempts: 1, durationMs: 3.2 }),
      event({ type: 'tool_processing_complete', results: 1, failed: 0 }),
      event({ type: 'step-start', step: 2 }),
      event({ type: 'text-delta', delta: 'It is 4.' }),
      event({ type: 'step-finish', step: 2, finishReason: 'stop', usage }),
      event({ type: 'turn-finish', finishReason: 'stop', usage: { ...usage, totalTokens: 30 } }),
    ]);
    expect(output).toBe(
      [
        '[watching conv_1 after seq 0; Ctrl-C stops]',
        '[turn turn_1 started]',
        'Let me add.',
        '┌ calculator (call_0) {"expression":"2+2"}',
        '[running 1 tool call]',
        '└ calculator (call_0) → {"value":4} (1 attempt, 3 ms)',
        '[step 2]',
        'It is 4.',
        '[step 2: stop, 15 tokens]',
        '[turn finished: stop, 30 tokens]',
        '',
      ].join('\n'),
    );
  });

  it('marks reasoning apart from the answer, and shows failures, approvals, retries and ends', () => {
    const output = render([
      event({ type: 'reasoning-delta', delta: 'Thinking' }),
      event({ type: 'text-delta', delta: 'Answer' }),
      event({ type: 'tool-call-start', toolCallId: 'c1', toolName: 'transfer' }),
      event({ type: 'tool-call-end', toolCallId: 'c1', args: null, error: { code: 'invalid_arguments', message: 'amount is required' } }),
      event({ type: 'tool-approval-request', toolCallId: 'c2', toolName: 'transfer', args: {}, approvalId: 'appr_1', expiresAt: '2026-01-01T00:00:00.000Z' }),
      event({ type: 'tool-approval-response', toolCallId: 'c2', approved: false, reason: 'too much' }),
      event({ type: 'tool-result', toolCallId: 'c3', error: { code: 'http_error', message: 'the backend is down' }, attempts: 3, durationMs: 120 }),
      event({ type: 'provider-retry', attempt: 2, retryInMs: 1000, reason: '429' }),
      event({ type: 'attempt-discarded', attempt: 2, step: 1 }),
      event({ type: 'a-type-of-tomorrow', whatever: true }),
      event({ type: 'turn-error', error: { code: 'retries_exhausted', message: 'gave up' } }),
      { type: 'reloaded', conversationId: 'conv_1', lastSeq: 40 },
      event({ type: 'turn-cancelled' }),
    ]);
    expect(output.split('\n')).toEqual([
      '[reasoning]',
      'Thinking',
      '[answer]',
      'Answer',
      '┌ transfer (c1): invalid arguments: amount is required',
      '[transfer (c2) waits for approval until 2026-01-01T00:00:00.000Z: approve turn_1 c2 [--deny]]',
      '[transfer (c2) denied: too much]',
      '└ tool (c3) failed: http_error: the backend is down (3 attempts, 120 ms)',
      '[the provider failed (429): trying again in 1000 ms]',
      '[step 1 starts again (attempt 2): what it showed since its start is dropped]',
      '[turn failed: retries_exhausted: gave up]',
      '[the replay log no longer held where this was: reloaded at seq 40]',
      '[turn cancelled]',
      '',
    ]);
  });
});
