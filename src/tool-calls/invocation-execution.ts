import type { ToolInvocation, ToolInvocationsRepository } from '../store/tool-invocations-repository';
import type { ToolExecutionKind } from './tool-execution-kind';

/**
 * A direct invocation (`POST /v1/tools/:name/invoke`): stored in `tool_invocations`, where the
 * request waiting for it reads its outcome, so there is nothing to announce. Its downstream
 * Idempotency-Key is `<invocationId>:invoke`, and the id is derived from the caller's
 * Idempotency-Key, so a repeat of the request reaches the tool with the same key.
 */
export function invocationExecution(deps: { invocations: ToolInvocationsRepository }, invocationId: string): ToolExecutionKind<ToolInvocation> {
  return {
    ids: { turnId: invocationId, toolCallId: 'invoke' },
    async markRunning() {
      const invocation = await deps.invocations.markRunning(invocationId);
      if (!invocation) return null;
      return { toolName: invocation.toolName, args: invocation.params, attempts: invocation.attempts, logFields: {} };
    },
    announceAgain: async () => undefined,
    settle: (settlement) => deps.invocations.settle(invocationId, settlement),
    announce: async () => undefined,
  };
}
