import type { EventPayload } from '../events/event';
import { durationMs, type ToolCallRecord } from '../store/tool-calls-repository';

const OUTCOME_UNKNOWN = { code: 'outcome_unknown', message: 'the tool call ended without a result' };

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
