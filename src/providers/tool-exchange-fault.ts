/** The parts of a chat message that the tool-exchange rules read (a {@link ChatMessage} is one). */
export interface ExchangeMessage {
  role: string;
  tool_calls?: readonly { id: string }[] | null;
  tool_call_id?: string | null;
}

/** Why providers refuse a history, at the message `index` of it. */
export type ToolExchangeFault =
  /** The assistant message at `index` has calls that no tool message right after it answers. */
  | { kind: 'unanswered'; index: number; callIds: string[] }
  /** The tool message at `index` answers no call of the assistant message just before its run. */
  | { kind: 'unexpected_answer'; index: number; callId: string }
  /** The tool message at `index` answers a call that a tool message before it answered. */
  | { kind: 'answered_twice'; index: number; callId: string };

/**
 * Whether every provider accepts this history's tool exchanges, the rules OpenAI enforces and
 * the others share: an assistant message with `tool_calls` is followed directly by exactly one
 * `tool` message per call id, in any order, and a `tool` message only answers a call of the
 * assistant message just before its run. The first fault, or undefined. Pure; everything that
 * makes or changes a stored history (fork, edit, regenerate, OpenAI inputs) and the scripted
 * model decide with it, so that what Switchyard stores is what a provider takes.
 */
export function findToolExchangeFault(messages: readonly ExchangeMessage[]): ToolExchangeFault | undefined {
  // Ids the current run of tool messages may answer, and those not answered yet.
  let answerable = new Set<string>();
  let unanswered = new Set<string>();
  let callerIndex = -1;

  for (const [index, message] of messages.entries()) {
    if (message.role === 'tool') {
      const callId = message.tool_call_id ?? '';
      if (!answerable.has(callId)) return { kind: 'unexpected_answer', index, callId };
      if (!unanswered.has(callId)) return { kind: 'answered_twice', index, callId };
      unanswered.delete(callId);
      continue;
    }
    if (unanswered.size > 0) return { kind: 'unanswered', index: callerIndex, callIds: [...unanswered] };
    answerable = new Set(message.role === 'assistant' ? (message.tool_calls ?? []).map((call) => call.id) : []);
    unanswered = new Set(answerable);
    callerIndex = index;
  }
  return unanswered.size > 0 ? { kind: 'unanswered', index: callerIndex, callIds: [...unanswered] } : undefined;
}
