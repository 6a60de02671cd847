import type { UIMessage } from 'ai';

/** A message as `GET /v1/conversations/:id` shows it. */
export interface StoredMessage {
  role: 'user' | 'assistant' | 'tool';
  content: unknown;
  toolCalls?: { id: string; function: { name: string; arguments: string } }[];
  toolCallId?: string;
  turnId: string | null;
}

/**
 * Stored history as the AI SDK's UI messages: one assistant message per turn, with the turn id
 * as its id, the same id `/api/chat` streams under, so that resuming an active turn replaces
 * its message rather than adding a second one. Pure.
 */
export function storedToUiMessages(messages: StoredMessage[]): UIMessage[] {
  const ui: UIMessage[] = [];
  const assistants = new Map<string, UIMessage>();
  const toolParts = new Map<string, Record<string, unknown>>();
  messages.forEach((message, index) => {
    const turnKey = message.turnId ?? `message-${index}`;
    if (message.role === 'user') {
      ui.push({ id: `${turnKey}:user`, role: 'user', parts: [{ type: 'text', text: textOf(message.content) }] });
      return;
    }
    if (message.role === 'tool') {
      const part = message.toolCallId ? toolParts.get(message.toolCallId) : undefined;
      if (part) Object.assign(part, { state: 'output-available', output: parseJson(textOf(message.content)) });
      return;
    }
    let assistant = assistants.get(turnKey);
    if (!assistant) {
      assistant = { id: turnKey, role: 'assistant', parts: [] };
      assistants.set(turnKey, assistant);
      ui.push(assistant);
    }
    assistant.parts.push({ type: 'step-start' });
    const text = textOf(message.content);
    if (text) assistant.parts.push({ type: 'text', text, state: 'done' });
    for (const call of message.toolCalls ?? []) {
      const part = { type: `tool-${call.function.name}`, toolCallId: call.id, state: 'input-available', input: parseJson(call.function.arguments) };
      toolParts.set(call.id, part);
      assistant.parts.push(part as UIMessage['parts'][number]);
    }
  });
  return ui;
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (part && typeof part === 'object' && 'text' in part ? String(part.text) : '')).join('\n');
  return content == null ? '' : JSON.stringify(content);
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
