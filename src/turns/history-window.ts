import type { StoredMessage } from '../store/messages-repository';

/**
 * The history a bounded turn sends, from the last messages read for it: it starts at a user
 * message, so that no tool message is sent without the assistant message that called it, and no
 * answer without its question. The messages read always include the turn's own user message, so
 * the cut never passes it.
 */
export function startAtUserMessage(recent: StoredMessage[]): StoredMessage[] {
  const first = recent.findIndex((message) => message.role === 'user');
  return first <= 0 ? recent : recent.slice(first);
}
