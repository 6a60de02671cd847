import type { ChatMessage, ContentPart } from '../providers/model-provider';
import type { StoredMessage } from '../store/messages-repository';
import type { ChatMessagesInput } from '../events/turn-content';

/**
 * The provider request's messages: the conversation's system prompt, then its history in order.
 * An incomplete message (what a cancelled step had streamed) goes as its text alone; an
 * assistant message with neither text nor calls does not go.
 */
export function buildMessages(system: string | null, history: StoredMessage[]): ChatMessage[] {
  const messages: ChatMessage[] = system ? [{ role: 'system', content: system }] : [];
  for (const message of history) {
    switch (message.role) {
      case 'user':
        if (isChatMessagesInput(message.content)) messages.push(...message.content.messages);
        else messages.push({ role: 'user', content: message.content as string | ContentPart[] });
        break;
      case 'assistant':
        // A stopped step that streamed only reasoning (the provider takes none back), or its copy
        // in a fork: nothing for the model, and no provider takes an empty assistant message.
        if (!message.content && !message.toolCalls?.length) break;
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

/** A turn input of chat messages (checked where it was accepted): they stand in for its user message. */
export function isChatMessagesInput(content: unknown): content is ChatMessagesInput {
  return typeof content === 'object' && content !== null && !Array.isArray(content) && (content as { type?: unknown }).type === 'chat_messages';
}
