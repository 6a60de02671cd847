import type { ChatMessage } from './chat-request-schema';
import { invalidRequest, type OpenAiError } from './openai-error';

/**
 * OpenAI's ordering rules for tool calls, which clients most often get wrong: an assistant
 * message with `tool_calls` is followed directly by exactly one `tool` message per call id,
 * and a `tool` message only answers a call of the assistant message just before its run.
 * Returns the first violation, worded as OpenAI words it.
 */
export function checkToolMessageOrder(messages: readonly ChatMessage[]): OpenAiError | undefined {
  // Ids the current run of tool messages may answer, and those not answered yet.
  let answerable = new Set<string>();
  let unanswered = new Set<string>();
  let callerIndex = -1;

  for (const [index, message] of messages.entries()) {
    if (message.role === 'tool') {
      const id = message.tool_call_id;
      if (!answerable.has(id)) {
        return invalidRequest(
          "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.",
          `messages.[${index}].role`,
        );
      }
      if (!unanswered.has(id)) {
        return invalidRequest(
          `Invalid parameter: the tool_call_id '${id}' has more than one response message; each tool call is answered exactly once.`,
          `messages.[${index}].tool_call_id`,
        );
      }
      unanswered.delete(id);
      continue;
    }
    if (unanswered.size > 0) return orphanedCalls(callerIndex, unanswered);
    answerable = new Set(message.role === 'assistant' ? (message.tool_calls ?? []).map((call) => call.id) : []);
    unanswered = new Set(answerable);
    callerIndex = index;
  }
  return unanswered.size > 0 ? orphanedCalls(callerIndex, unanswered) : undefined;
}

function orphanedCalls(callerIndex: number, ids: Set<string>): OpenAiError {
  return invalidRequest(
    "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
      `The following tool_call_ids did not have response messages: ${[...ids].join(', ')}`,
    `messages.[${callerIndex}].role`,
  );
}
