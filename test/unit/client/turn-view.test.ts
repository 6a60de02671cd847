import { turnViewOf } from '@switchyard/client';
import type { SwitchyardEvent } from '../../../src/events/event';

let seq = 0;
const event = (body: Record<string, unknown>) => ({ conversationId: 'c', turnId: 't', seq: ++seq, ...body }) as SwitchyardEvent;
const usage = { promptTokens: 1, completionTokens: 2, totalTokens: 3 };

describe('the client library turn view', () => {
  it('assembles text and tool calls, and forgets what a discarded attempt showed of its step', () => {
    const view = turnViewOf('t', 'c', [
      event({ type: 'turn-start', attempt: 1 }),
      event({ type: 'step-start', step: 1 }),
      event({ type: 'text-delta', delta: 'Let me add. ' }),
      event({ type: 'tool-call-start', toolCallId: 'a', toolName: 'calculator' }),
      event({ type: 'tool-call-delta', toolCallId: 'a', argsTextDelta: '{"expression":' }),
      event({ type: 'tool-call-delta', toolCallId: 'a', argsTextDelta: '"1+1"}' }),
      event({ type: 'tool-call-end', toolCallId: 'a', args: { expression: '1+1' } }),
      event({ type: 'step-finish', step: 1, finishReason: 'tool_calls', usage }),
      event({ type: 'tool_processing_start', toolCalls: [{ toolCallId: 'a', toolName: 'calculator', args: { expression: '1+1' } }] }),
      event({ type: 'tool-result', toolCallId: 'a', result: { result: 2 }, attempts: 2, durationMs: 12 }),
      event({ type: 'tool_processing_complete', results: 1, failed: 0 }),
      event({ type: 'step-start', step: 2 }),
      event({ type: 'text-delta', delta: 'It is tw' }),
      event({ type: 'tool-call-start', toolCallId: 'b', toolName: 'calculator' }),
      event({ type: 'attempt-discarded', attempt: 2, step: 2 }),
      event({ type: 'text-delta', delta: 'stray' }),
      event({ type: 'turn-start', attempt: 2 }),
      event({ type: 'step-start', step: 2 }),
      event({ type: 'text-delta', delta: 'It is 2.' }),
      event({ type: 'turn-finish', finishReason: 'stop', usage }),
    ]);
    expect(view).toMatchObject({ status: 'completed', attempt: 2, text: 'Let me add. It is 2.', finishReason: 'stop', usage });
    expect(view.steps.map((step) => [step.step, step.text])).toEqual([
      [1, 'Let me add. '],
      [2, 'It is 2.'],
    ]);
    expect(Object.keys(view.toolCalls)).toEqual(['a']);
    expect(view.toolCalls.a).toMatchObject({
      status: 'succeeded',
      argsText: '{"expression":"1+1"}',
      args: { expression: '1+1' },
      result: { result: 2 },
      attempts: 2,
      durationMs: 12,
    });
  });
});

describe('the client library turn view and approvals', () => {
  const request = (toolCallId: string) => ({
    type: 'tool-approval-request',
    toolCallId,
    toolName: 'transfer',
    args: { to: 'bob' },
    approvalId: `appr_${toolCallId}`,
    expiresAt: '2030-01-01T00:00:00.000Z',
  });
  const start = [
    event({ type: 'turn-start', attempt: 1 }),
    event({ type: 'step-start', step: 1 }),
    event({ type: 'tool-call-start', toolCallId: 'a', toolName: 'transfer' }),
    event({ type: 'tool-call-end', toolCallId: 'a', args: { to: 'bob' } }),
    event({ type: 'step-finish', step: 1, finishReason: 'tool_calls', usage }),
    event({ type: 'tool_processing_start', toolCalls: [{ toolCallId: 'a', toolName: 'transfer', args: { to: 'bob' } }] }),
    event(request('a')),
    event({ type: 'turn-waiting', toolCallIds: ['a'] }),
  ];

  it('shows a call awaiting approval and the turn parked on it, then the decision and the run', () => {
    const parked = turnViewOf('t', 'c', start);
    expect(parked.status).toBe('waiting-for-approval');
    expect(parked.toolCalls.a).toMatchObject({ status: 'awaiting-approval', approval: { approvalId: 'appr_a', expiresAt: '2030-01-01T00:00:00.000Z' } });
    const approved = turnViewOf('t', 'c', [...start, event({ type: 'tool-approval-response', toolCallId: 'a', approved: true, reason: 'ok' })]);
    expect(approved.status).toBe('running-tools');
    expect(approved.toolCalls.a).toMatchObject({ status: 'running', approval: { approvalId: 'appr_a', approved: true, reason: 'ok' } });
  });

  it('ends a denied call failed with its denied error, the decision kept', () => {
    const denied = turnViewOf('t', 'c', [
      ...start,
      event({ type: 'tool-approval-response', toolCallId: 'a', approved: false, reason: 'no' }),
      event({ type: 'tool-result', toolCallId: 'a', error: { code: 'denied', message: 'no' }, attempts: 0, durationMs: 0 }),
    ]);
    expect(denied.toolCalls.a).toMatchObject({ status: 'failed', error: { code: 'denied' }, approval: { approved: false, reason: 'no' } });
  });

  it('says waiting-for-client when the turn also waits for a client tool', () => {
    const mixed = turnViewOf('t', 'c', [
      ...start.slice(0, -1),
      event({ type: 'tool-call-request', toolCallId: 'b', toolName: 'ask', args: {} }),
      event({ type: 'turn-waiting', toolCallIds: ['a', 'b'] }),
    ]);
    expect(mixed.status).toBe('waiting-for-client');
  });

  it('keeps the fallbacks of a turn, and shows a step restarted on the next target once, within one attempt', () => {
    const from = { provider: 'groq', model: 'llama' };
    const to = { provider: 'openai', model: 'gpt-4.1-mini' };
    const view = turnViewOf('t', 'c', [
      event({ type: 'turn-start', attempt: 1 }),
      event({ type: 'step-start', step: 1 }),
      event({ type: 'text-delta', delta: 'Half an ans' }),
      event({ type: 'attempt-discarded', attempt: 1, step: 1 }),
      event({ type: 'provider-fallback', step: 1, from, to, reason: 'truncated' }),
      event({ type: 'step-start', step: 1 }),
      event({ type: 'text-delta', delta: 'A whole answer.' }),
      event({ type: 'turn-finish', finishReason: 'stop', usage }),
    ]);
    expect(view.text).toBe('A whole answer.');
    expect(view.attempt).toBe(1);
    expect(view.fallbacks).toEqual([{ step: 1, from, to, reason: 'truncated' }]);
  });

  it('shows a compaction running, then what it saved', () => {
    const running = turnViewOf('t', 'c', [event({ type: 'turn-start', attempt: 1 }), event({ type: 'compaction-start', compactionId: 'cmp_1' })]);
    expect(running.compactions).toEqual([{ compactionId: 'cmp_1', status: 'running' }]);
    const done = turnViewOf('t', 'c', [
      event({ type: 'turn-start', attempt: 1 }),
      event({ type: 'compaction-start', compactionId: 'cmp_1' }),
      event({ type: 'compaction-finish', compactionId: 'cmp_1', tokensBefore: 900, tokensAfter: 120 }),
      event({ type: 'step-start', step: 1 }),
      event({ type: 'text-delta', delta: 'Short now.' }),
    ]);
    expect(done.compactions).toEqual([{ compactionId: 'cmp_1', status: 'done', tokensBefore: 900, tokensAfter: 120 }]);
    expect(done.text).toBe('Short now.');
  });
});
