import type { AssistantToolCall } from '../providers/model-provider';
import type { NewToolCall } from '../store/tool-calls-repository';
import type { ToolRegistry } from '../tools/tool';

/**
 * Checks a step's tool calls before anything runs: a call that names a tool the turn does not
 * offer, or whose arguments are not JSON or miss the schema, is stored already failed with
 * `invalid_arguments`; the model gets that error as the call's result. Pure but for the
 * registry's (pure) argument check.
 */
export function prepareToolCalls(input: {
  calls: AssistantToolCall[];
  offered: ReadonlySet<string>;
  registry: Pick<ToolRegistry, 'checkArguments' | 'get'>;
  /** Calls past this many in one step are not run (a per-turn cap on runaway fan-out). */
  maxCalls: number;
  turnId: string;
  conversationId: string;
  step: number;
  /** Which valid calls wait for a person's approval first, and until when; ids and the clock are passed in. */
  approval: { required(toolName: string): boolean; expiresAt(toolName: string): string; newId(): string };
}): NewToolCall[] {
  return input.calls.map((call, position) => {
    const base = {
      turnId: input.turnId,
      toolCallId: call.id,
      conversationId: input.conversationId,
      step: input.step,
      position,
      name: call.function.name,
      argumentsText: call.function.arguments,
    };
    if (position >= input.maxCalls) {
      return {
        ...base,
        kind: null,
        args: null,
        status: 'failed',
        error: { code: 'too_many_tool_calls', message: `at most ${input.maxCalls} tool calls run per step; this one was not run` },
      };
    }
    if (!input.offered.has(call.function.name)) {
      return {
        ...base,
        kind: null,
        args: null,
        status: 'failed',
        error: { code: 'invalid_arguments', message: `unknown tool "${call.function.name}": this turn does not offer it` },
      };
    }
    const kind = input.registry.get(call.function.name)?.kind ?? null;
    const checked = input.registry.checkArguments(call.function.name, call.function.arguments || '{}');
    if (!checked.ok) return { ...base, kind, args: null, status: 'failed', error: checked.error };
    if (input.approval.required(call.function.name)) {
      const approval = { approvalId: input.approval.newId(), expiresAt: input.approval.expiresAt(call.function.name) };
      return { ...base, kind, args: checked.args, status: 'awaiting_approval', approval };
    }
    return { ...base, kind, args: checked.args, status: 'pending' };
  });
}
