import { findToolExchangeFault, type ToolExchangeFault } from '../providers/tool-exchange-fault';
import type { MessageOutline } from '../store/messages-repository';
import { formatMessageId } from '../store/message-id';

/** Why providers would refuse a stored path, worded for the person who asked for it. */
export interface PathFault {
  fault: ToolExchangeFault;
  /** The stored message (`msg_<n>`) the fault is at. */
  messageId: string;
  /** The fault is calls without results at the end of the path: its last step, not settled yet. */
  unsettledEnd: boolean;
  /** What is wrong, naming the message and the call ids. */
  text: string;
}

/** The first fault of an outlined path (tool-exchange-fault.ts), or undefined when providers accept it. */
export function findPathFault(outline: readonly MessageOutline[]): PathFault | undefined {
  const fault = findToolExchangeFault(outline);
  if (!fault) return undefined;
  const messageId = formatMessageId(outline[fault.index]!.rowId);
  switch (fault.kind) {
    case 'unanswered':
      return {
        fault,
        messageId,
        unsettledEnd: outline.slice(fault.index + 1).every((message) => message.role === 'tool'),
        text: `the tool calls ${fault.callIds.join(', ')} of ${messageId} have no results`,
      };
    case 'unexpected_answer':
      return { fault, messageId, unsettledEnd: false, text: `${messageId} answers the tool call ${fault.callId}, which the assistant message before it did not make` };
    case 'answered_twice':
      return { fault, messageId, unsettledEnd: false, text: `${messageId} answers the tool call ${fault.callId} a second time` };
  }
}
