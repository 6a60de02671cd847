import type { Tracer } from '@opentelemetry/api';
import { GEN_AI, spanNames, SWITCHYARD } from './span-attributes';
import { contextFrom } from './trace-context';

/**
 * A decision on a call's approval, in the turn's trace: a short span whose one event is the
 * decision, so that a trace shows when the call was let through (or why it never ran).
 */
export function recordApprovalDecision(
  tracer: Tracer,
  input: { traceparent: string | null; turnId: string; toolCallId: string; toolName: string; outcome: 'approved' | 'denied' | 'timeout'; waitedMs: number },
): void {
  const span = tracer.startSpan(
    spanNames.decideApproval(input.toolName),
    { attributes: { [SWITCHYARD.turnId]: input.turnId, [GEN_AI.toolCallId]: input.toolCallId, [GEN_AI.toolName]: input.toolName } },
    contextFrom(input.traceparent),
  );
  span.addEvent('tool_approval.decided', { [SWITCHYARD.approvalOutcome]: input.outcome, 'switchyard.tool.approval.waited_ms': input.waitedMs });
  span.setAttribute(SWITCHYARD.approvalOutcome, input.outcome);
  span.end();
}
