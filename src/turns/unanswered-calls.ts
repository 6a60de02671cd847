import { AppError } from '../errors/app-error';
import type { ExchangeMessage } from '../providers/tool-exchange-fault';
import type { MessageOutline } from '../store/messages-repository';
import { isChatMessagesInput } from './build-messages';
import { findPathFault } from './path-fault';

/**
 * The refusal of a new turn whose input would follow calls that have no results (the caller's
 * functions an OpenAI response ended with, until a function_call_output answers them): 409
 * conflict naming the calls, since its history, and every later turn's, is one no provider
 * accepts. `lastStep`: the path's last step (its outline); `content`: the turn's input, whose
 * chat messages (an OpenAI input) may answer them.
 */
export function unansweredCallsRefusal(lastStep: readonly MessageOutline[], content: unknown): AppError | undefined {
  const input: ExchangeMessage[] = isChatMessagesInput(content) ? content.messages : [{ role: 'user' }];
  // Not stored yet: named after the message they would follow.
  const rowId = lastStep.at(-1)?.rowId ?? '0';
  const added = input.map((message): MessageOutline => ({ rowId, role: message.role, tool_calls: [...(message.tool_calls ?? [])], tool_call_id: message.tool_call_id ?? null }));
  const fault = findPathFault([...lastStep, ...added]);
  if (!fault) return undefined;
  const toolCallIds = fault.fault.kind === 'unanswered' ? fault.fault.callIds : [];
  const message =
    fault.fault.kind === 'unanswered'
      ? `${fault.text}: answer them first (function_call_output items of POST /openai/v1/responses with previous_response_id or conversation)`
      : `the turn would send a history providers refuse: ${fault.text}`;
  return new AppError('conflict', `conflict: ${message}`, { toolCallIds });
}
