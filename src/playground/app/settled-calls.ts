import { isToolUIPart, type UIMessage } from 'ai';

const SETTLED_STATES = new Set(['output-available', 'output-error', 'output-denied']);

/**
 * Puts back, as they were in `before`, the messages in which the call `toolCallId` had already
 * settled. The AI SDK's `addToolOutput` writes an output into the first message holding a part
 * with that id, as well as into the message streaming now; providers number calls afresh in each
 * answer (`call_0` in every turn), so a later turn's browser tool would overwrite an earlier
 * turn's answer. A call is its turn's and its id together: only the open one takes the output.
 * Pure.
 */
export function keepSettledCalls(before: UIMessage[], after: UIMessage[], toolCallId: string): UIMessage[] {
  const settled = new Map(
    before
      .filter((message) => message.parts.some((part) => isToolUIPart(part) && part.toolCallId === toolCallId && SETTLED_STATES.has(part.state)))
      .map((message) => [message.id, message]),
  );
  if (settled.size === 0) return after;
  return after.map((message) => settled.get(message.id) ?? message);
}
