import type { Span } from '@opentelemetry/api';
import { failSpan } from './fail-span';
import { spanNames, SWITCHYARD, toolCallAttributes } from './span-attributes';

/** What an execution came to: the tool's own outcome, or why it did not run. */
export type ToolSpanOutcome = 'succeeded' | 'failed' | 'retry' | 'already_settled' | 'aborted';

/** Names an execute_tool span after its call, once the call is read (its job carries ids only). */
export function describeToolCall(span: Span | undefined, call: { toolName: string; toolCallId?: string; kind?: string; attempts: number }): void {
  if (!span) return;
  span.updateName(spanNames.executeTool(call.toolName));
  span.setAttributes(toolCallAttributes(call));
}

/** Records the outcome; a failure (also one to be retried) carries the tool's error code as `error.type`. */
export function recordToolOutcome(span: Span | undefined, outcome: ToolSpanOutcome, errorCode?: string): void {
  if (!span) return;
  span.setAttribute(SWITCHYARD.toolOutcome, outcome);
  if (errorCode) failSpan(span, errorCode);
}
