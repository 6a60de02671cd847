import type { ContentPart } from '../providers/model-provider';
import type { StoredMessage } from '../store/messages-repository';
import { isChatMessagesInput } from '../turns/build-messages';
import { itemIds, outputText, type OutputText } from './response-items';

type InputContent = { type: 'input_text'; text: string } | { type: 'input_image'; image_url: string; detail: 'auto' };

/** An item of a conversation or of a response's input, as OpenAI's `ConversationItem` shapes it. */
export type ConversationItem =
  | { type: 'message'; id: string; status: 'completed' | 'incomplete'; role: 'user'; content: InputContent[] }
  | { type: 'message'; id: string; status: 'completed' | 'incomplete'; role: 'assistant'; content: OutputText[] }
  | { type: 'function_call'; id: string; call_id: string; name: string; arguments: string; status: 'completed' }
  | { type: 'function_call_output'; id: string; call_id: string; output: string; status: 'completed' };

/**
 * A conversation's path as OpenAI's items, oldest first. Pure.
 * - A user message is a `message` item `msg_<n>` (its stored id); one given as chat messages
 *   (an OpenAI input, or the items a conversation was made with) is its messages, each an item:
 *   `msg_<n>_<i>`, or the `function_call` / `function_call_output` of its calls.
 * - A turn's answer has the ids its response shows (response-items.ts): what a response's
 *   `output` named is the same item here.
 */
export function conversationItems(messages: readonly StoredMessage[]): ConversationItem[] {
  const items: ConversationItem[] = [];
  const steps = new Map<string, number>();
  for (const message of messages) {
    if (message.role === 'user') items.push(...userItems(message));
    else if (message.role === 'assistant') {
      const step = message.turnId ? (steps.get(message.turnId) ?? 0) + 1 : 0;
      if (message.turnId) steps.set(message.turnId, step);
      if (typeof message.content === 'string' && message.content !== '') {
        const id = message.turnId ? itemIds.message(message.turnId, step) : message.id;
        items.push({ type: 'message', id, status: message.incomplete ? 'incomplete' : 'completed', role: 'assistant', content: [outputText(message.content)] });
      }
      for (const call of message.toolCalls ?? []) items.push(functionCall(call.id, call.function.name, call.function.arguments));
    } else if (message.toolCallId) items.push(functionCallOutput(message.toolCallId, String(message.content)));
  }
  return items;
}

/** A turn's input (its stored user message's content) as items. Pure. */
export function inputItems(messageId: string, content: unknown): ConversationItem[] {
  return userItems({ id: messageId, content });
}

function userItems(message: Pick<StoredMessage, 'id' | 'content'>): ConversationItem[] {
  if (!isChatMessagesInput(message.content)) return [{ type: 'message', id: message.id, status: 'completed', role: 'user', content: inputContent(message.content) }];
  const items: ConversationItem[] = [];
  message.content.messages.forEach((part, index) => {
    const id = `${message.id}_${index}`;
    if (part.role === 'user') items.push({ type: 'message', id, status: 'completed', role: 'user', content: inputContent(part.content) });
    else if (part.role === 'tool') items.push(functionCallOutput(part.tool_call_id, part.content));
    else {
      if (part.content) items.push({ type: 'message', id, status: 'completed', role: 'assistant', content: [outputText(part.content)] });
      for (const call of part.tool_calls ?? []) items.push(functionCall(call.id, call.function.name, call.function.arguments));
    }
  });
  return items;
}

function inputContent(content: unknown): InputContent[] {
  if (typeof content === 'string') return [{ type: 'input_text', text: content }];
  if (!Array.isArray(content)) return [];
  return (content as ContentPart[]).map((part) =>
    part.type === 'text' ? { type: 'input_text', text: part.text } : { type: 'input_image', image_url: part.image_url.url, detail: 'auto' },
  );
}

const functionCall = (callId: string, name: string, args: string): ConversationItem => ({
  type: 'function_call',
  id: itemIds.functionCall(callId),
  call_id: callId,
  name,
  arguments: args,
  status: 'completed',
});

const functionCallOutput = (callId: string, output: string): ConversationItem => ({
  type: 'function_call_output',
  id: itemIds.functionCallOutput(callId),
  call_id: callId,
  output,
  status: 'completed',
});

/** OpenAI's list of items: a page after the item `after` in `order`. Pure. */
export function itemPage(
  items: readonly ConversationItem[],
  query: { after?: string | undefined; limit: number; order: 'asc' | 'desc' },
): { object: 'list'; data: ConversationItem[]; first_id: string | null; last_id: string | null; has_more: boolean } {
  const ordered = query.order === 'asc' ? items : [...items].reverse();
  const start = query.after === undefined ? 0 : ordered.findIndex((item) => item.id === query.after) + 1;
  // An `after` that names no item starts nowhere: an empty page, as a cursor past the end.
  const from = query.after !== undefined && start === 0 ? ordered.length : start;
  const data = ordered.slice(from, from + query.limit);
  return { object: 'list', data, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null, has_more: from + query.limit < ordered.length };
}
