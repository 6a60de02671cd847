import type { BatchMessage } from '../store/batch-item';

const isUser = (message: BatchMessage) => typeof message !== 'object' || Array.isArray(message) || message.role === 'user';

/** The index of the first user message at or after `from`; -1 when there is none. Pure. */
export function nextUserMessage(messages: BatchMessage[], from: number): number {
  for (let index = from; index < messages.length; index++) if (isUser(messages[index]!)) return index;
  return -1;
}

/** The assistant messages in `[from, to)`: context stored before the turn of the message at `to`. Pure. */
export function contextBefore(messages: BatchMessage[], from: number, to: number): unknown[] {
  return messages.slice(from, to).flatMap((message) => (isUser(message) ? [] : [(message as { content: unknown }).content]));
}
