import type { ChatMessage, ContentPart } from '../providers/model-provider';
import type { StoredMessage } from '../store/messages-repository';

/** The provider request's messages: the conversation's system prompt, then its history in order. */
export function buildMessages(system: string | null, history: StoredMessage[]): ChatMessage[] {
  const messages: ChatMessage[] = system ? [{ role: 'system', content: system }] : [];
  for (const message of history) {
    switch (message.role) {
      case 'user':
        messages.push({ role: 'user', content: message.content as string | ContentPart[] });
        break;
      case 'assistant':
        messages.push({
          role: 'assistant',
          content: (message.content as string | null) ?? null,
          ...(message.toolCalls && message.toolCalls.length > 0 ? { tool_calls: message.toolCalls } : {}),
        });
        break;
      case 'tool':
        messages.push({ role: 'tool', tool_call_id: message.toolCallId ?? '', content: String(message.content) });
        break;
    }
  }
  return messages;
}
