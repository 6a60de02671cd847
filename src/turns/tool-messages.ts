import type { EventPayload } from '../events/event';
import { durationMs, type ToolCallRecord } from '../store/tool-calls-repository';

const OUTCOME_UNKNOWN = { code: 'outcome_unknown', message: 'the tool call ended without a result' };

/**
 * The `tool` message the model receives for a call: the result as JSON text (a string result
 * as it is), or `{"error": {code, message}}`, so the model can read a failure and try again.
 */
export function toolMessageContent(call: Pick<ToolCallRecord, 'status' | 'result' | 'error'>): string {
  if (call.status === 'succeeded') return typeof call.result === 'string' ? call.result : JSON.stringify(call.result ?? null);
  const error = call.error ?? OUTCOME_UNKNOWN;
  return JSON.stringify({ error: { code: error.code, message: error.message } });
}

/** The `tool-result` event clients see for a settled call. */
export function toolResultEvent(
  call: ToolCallRecord,
  overrides: { attempts?: number; durationMs?: number } = {},
): Extract<EventPayload, { type: 'tool-result' }> {
  return {
    type: 'tool-result',
    toolCallId: call.toolCallId,
    ...(call.status === 'succeeded' ? { result: call.result } : { error: call.error ?? OUTCOME_UNKNOWN }),
    attempts: overrides.attempts ?? call.attempts,
    durationMs: overrides.durationMs ?? durationMs(call),
  };
}
