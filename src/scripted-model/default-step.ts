import type { ChatMessage, ChatRequest } from './chat-request-schema';
import { lastUserText, messageText } from './message-text';
import { callableTools } from './plan-reply';
import type { Step } from './scenario-schema';
import { structuredAnswer } from './structured-answer';

/** Longer tool results and user texts are cut to this many characters in answers. */
const MAX_QUOTED = 80;

/**
 * What the model answers without a scenario (or past its last step), deterministically: it
 * summarises tool results, calls the offered tools when asked to "use tools" (or made to by
 * `tool_choice`), and otherwise echoes the user; asked for structured output, it answers JSON
 * that fits (structured-answer.ts) instead of the summary or the echo. That is enough for a person to try the
 * whole tool loop against it.
 */
export function defaultStep(request: ChatRequest, tokenDelayMs: number): Step {
  const messages = request.messages;
  const structured = structuredAnswer(request, false);
  const afterTools = messages.at(-1)?.role === 'tool';
  if (afterTools) return { text: structured ?? summariseToolResults(messages), tokenDelayMs };

  const userText = lastUserText(messages);
  const told = /use tools/i.test(userText) || request.tool_choice === 'required' || typeof request.tool_choice === 'object';
  if (told && callableTools(request).length > 0) return { toolCalls: 'offered', tokenDelayMs };
  if (structured !== undefined) return { text: structured, tokenDelayMs };

  return {
    text:
      `You said: "${quote(userText)}". I am Switchyard's scripted model: ask me to "use tools" and I call the offered ` +
      'tools, or put [[scripted {"text": "..."}]] in a message to script my answer.',
    tokenDelayMs,
  };
}

/** "Tool results: calculator → {...}; current_time → {...}", in the order of the last round's tool messages. */
function summariseToolResults(messages: readonly ChatMessage[]): string {
  const callerIndex = messages.map((message) => message.role).lastIndexOf('assistant');
  const caller = messages[callerIndex];
  const names = new Map((caller?.role === 'assistant' ? (caller.tool_calls ?? []) : []).map((call) => [call.id, call.function.name]));
  const results = messages.slice(callerIndex + 1).flatMap((message) => {
    if (message.role !== 'tool') return [];
    return [`${names.get(message.tool_call_id) ?? message.tool_call_id} → ${quote(messageText(message))}`];
  });
  return `Tool results: ${results.join('; ')}`;
}

function quote(text: string): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > MAX_QUOTED ? `${flat.slice(0, MAX_QUOTED - 1)}…` : flat;
}
