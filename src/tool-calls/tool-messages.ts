import type { EventPayload } from '../events/event';
import { durationMs, type ToolCallRecord } from '../store/tool-calls-repository';

const OUTCOME_UNKNOWN = { code: 'outcome_unknown', message: 'the tool call ended without a result' };

/** The `tool-result` event clients see for a settled call. */
export function toolResultEvent(call: ToolCallRecord, overrides: { attempts?: number; durationMs?: number } = {}): Extract<EventPayload, { type: 'tool-result' }> {
  return {
    type: 'tool-result',
    toolCallId: call.toolCallId,
    ...(call.status === 'succeeded' ? { result: call.result } : { error: call.error ?? OUTCOME_UNKNOWN }),
    attempts: overrides.attempts ?? call.attempts,
    durationMs: overrides.durationMs ?? durationMs(call),
  };
}

/**
 * The `tool-result` event of a client tool's call, when it is answered and whenever it is
 * announced again: no attempt of Switchyard's ran, so its time is from the request to the answer.
 */
export function clientToolResultEvent(call: ToolCallRecord): Extract<EventPayload, { type: 'tool-result' }> {
  const askedToAnswered = call.finishedAt ? Date.parse(call.finishedAt) - Date.parse(call.createdAt) : 0;
  return toolResultEvent(call, { durationMs: Math.max(0, askedToAnswered) });
}
