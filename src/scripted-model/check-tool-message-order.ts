import { findToolExchangeFault } from '../providers/tool-exchange-fault';
import type { ChatMessage } from './chat-request-schema';
import { invalidRequest, type OpenAiError } from './openai-error';

/**
 * OpenAI's ordering rules for tool calls, which clients most often get wrong: an assistant
 * message with `tool_calls` is followed directly by exactly one `tool` message per call id,
 * and a `tool` message only answers a call of the assistant message just before its run.
 * The rules are Switchyard's own check of the histories it stores (tool-exchange-fault.ts), so
 * the scripted model refuses exactly what that check lets through. Returns the first
 * violation, worded as OpenAI words it.
 */
export function checkToolMessageOrder(messages: readonly ChatMessage[]): OpenAiError | undefined {
  const fault = findToolExchangeFault(messages);
  switch (fault?.kind) {
    case undefined:
      return undefined;
    case 'unexpected_answer':
      return invalidRequest("Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'.", `messages.[${fault.index}].role`);
    case 'answered_twice':
      return invalidRequest(
        `Invalid parameter: the tool_call_id '${fault.callId}' has more than one response message; each tool call is answered exactly once.`,
        `messages.[${fault.index}].tool_call_id`,
      );
    case 'unanswered':
      return invalidRequest(
        "An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. " +
          `The following tool_call_ids did not have response messages: ${fault.callIds.join(', ')}`,
        `messages.[${fault.index}].role`,
      );
  }
}
