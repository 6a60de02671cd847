import type { ToolCallRecord } from '../store/tool-calls-repository';

/**
 * The `tool` message the model receives for a call: the result as JSON text (a string result
 * as it is), or `{"error": {code, message}}`, so the model can read a failure and try again.
 */
export function toolMessageContent(call: Pick<ToolCallRecord, 'status' | 'result' | 'error'>): string {
  if (call.status === 'succeeded') return typeof call.result === 'string' ? call.result : JSON.stringify(call.result ?? null);
  const error = call.error ?? { code: 'outcome_unknown', message: 'the tool call ended without a result' };
  return JSON.stringify({ error: { code: error.code, message: error.message } });
}
