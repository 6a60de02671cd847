import type { BatchItemResult } from '../store/batches-repository';
import type { StoredMessage } from '../store/messages-repository';
import type { ToolCallRecord } from '../store/tool-calls-repository';
import type { Turn } from '../store/turns-repository';
import type { UsageFigures } from '../usage/store/usage-ledger-repository';

/**
 * An ended item's result (docs/API.md, "Results"): the final assistant text of its last turn,
 * the tool calls of its conversation's path (`messages`: a call an edit or a regenerate
 * replaced is not on it), `usage` (the ledger's sum for its conversation: every turn that ran, with its cost), and the error of a turn that
 * did not complete, and the structured output of a last turn that had a responseFormat. Pure.
 */
export function itemResult(input: { last: Turn; messages: StoredMessage[]; calls: ToolCallRecord[]; usage: UsageFigures }): BatchItemResult {
  const lastTexts = input.messages.filter((message) => message.role === 'assistant' && message.turnId === input.last.id && typeof message.content === 'string');
  const onPath = new Set(input.messages.flatMap((message) => (message.toolCalls ?? []).map((call) => `${message.turnId}\n${call.id}`)));
  const { promptTokens, completionTokens, totalTokens, costUsd } = input.usage;
  const usage = { promptTokens, completionTokens, totalTokens, costUsd };
  const error =
    input.last.status === 'failed'
      ? (input.last.error ?? { code: 'failed', message: 'the turn failed' })
      : input.last.status === 'cancelled'
        ? { code: 'cancelled', message: `the item's turn was ${input.last.finishReason ?? 'cancelled'}` }
        : undefined;
  const lastMessage = input.messages.findLast((message) => message.role === 'assistant' && message.turnId === input.last.id);
  const runHere = new Set(input.calls.filter((call) => call.turnId === input.last.id).map((call) => call.toolCallId));
  const callerToolCalls = input.last.finishReason === 'tool_calls' ? (lastMessage?.toolCalls ?? []).filter((call) => !runHere.has(call.id)) : [];
  const lastText = lastTexts[lastTexts.length - 1];
  return {
    text: (lastText?.content as string | undefined) ?? '',
    ...(lastText ? { messageId: lastText.id } : {}),
    toolCalls: input.calls
      .filter((call) => onPath.has(`${call.turnId}\n${call.toolCallId}`))
      .map((call) => ({
        toolName: call.name,
        args: call.args,
        ...(call.status === 'succeeded' ? { result: call.result } : {}),
        ...(call.error ? { error: call.error } : {}),
        attempts: call.attempts,
      })),
    usage,
    ...(error ? { error } : {}),
    turnId: input.last.id,
    ...(input.last.agentId !== null && input.last.agentVersion !== null ? { agentId: input.last.agentId, agentVersion: input.last.agentVersion } : {}),
    finishReason: input.last.finishReason,
    ...(callerToolCalls.length > 0 ? { callerToolCalls } : {}),
    ...(input.last.output !== undefined ? { output: input.last.output } : {}),
  };
}
