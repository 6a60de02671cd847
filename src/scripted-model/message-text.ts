import type { ChatMessage } from './chat-request-schema';
import { countTokens } from './tokenize';

/** The text of a message: a string as is, the text parts of an array joined by newlines (images and refusals carry none). */
export function messageText(message: ChatMessage): string {
  const content = message.content;
  if (typeof content === 'string') return content;
  return (content ?? []).flatMap((part) => (part.type === 'text' ? [part.text] : [])).join('\n');
}

/** The last user message's text, '' when there is none. */
export function lastUserText(messages: readonly ChatMessage[]): string {
  const user = messages.filter((message) => message.role === 'user').at(-1);
  return user ? messageText(user) : '';
}

/** A usage figure, not a tokenizer's: words of the texts and tool-call arguments, plus a few per message as OpenAI counts. */
export function estimatePromptTokens(messages: readonly ChatMessage[]): number {
  let total = 0;
  for (const message of messages) {
    total += 3 + countTokens(messageText(message));
    if (message.role === 'assistant') {
      for (const call of message.tool_calls ?? []) total += 1 + countTokens(call.function.arguments);
    }
  }
  return total;
}
