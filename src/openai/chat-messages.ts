import { z } from 'zod';
import type { ChatMessage, ContentPart, ToolChoice } from '../providers/model-provider';
import { findToolExchangeFault, type ToolExchangeFault } from '../providers/tool-exchange-fault';
import { chatMessagesInputSchema, toolNameSchema, turnContentSchema, type ChatMessagesInput } from '../events/turn-content';

const text = z.string().max(500_000);
const textParts = z.array(z.object({ type: z.literal('text'), text }).loose());

/** A message of a Chat Completions body (a request, or a batch line's). */
export const chatMessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.enum(['system', 'developer']), content: z.union([text, textParts]) }).loose(),
  z.object({ role: z.literal('user'), content: turnContentSchema }).loose(),
  z
    .object({
      role: z.literal('assistant'),
      content: z.union([text, textParts]).nullable().optional(),
      tool_calls: chatMessagesInputSchema.shape.messages.element.options[1].shape.tool_calls,
    })
    .loose(),
  z.object({ role: z.literal('tool'), tool_call_id: z.string().min(1).max(200), content: z.union([text, textParts]) }).loose(),
]);
export type ChatMessageInput = z.infer<typeof chatMessageSchema>;

/** A `function` tool of a Chat Completions body. */
export const chatFunctionToolSchema = z
  .object({
    type: z.literal('function'),
    function: z
      .object({
        name: toolNameSchema,
        description: z.string().max(10_000).optional(),
        parameters: z.record(z.string(), z.unknown()).nullable().optional(),
        strict: z.boolean().nullable().optional(),
      })
      .loose(),
  })
  .loose();

export const chatToolChoiceSchema = z.union([
  z.enum(['auto', 'none', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: toolNameSchema }).loose() }).loose(),
]);

export type ChatTurnPlan =
  | { ok: true; content: string | ContentPart[] | ChatMessagesInput; system?: string }
  /** `index`: the message at fault, counted in the body's `messages`. */
  | { ok: false; index: number; message: string };

/**
 * A Chat Completions body's messages as one turn, pure: its system and developer messages are
 * the turn's system prompt; the rest is what the turn answers (a single user message as it is,
 * earlier messages and tool answers as chat messages). Messages that pair a tool call wrongly
 * are refused, as OpenAI refuses them and so would the provider.
 */
export function planChatTurn(body: readonly ChatMessageInput[]): ChatTurnPlan {
  const system: string[] = [];
  const messages: ChatMessage[] = [];
  // Where each of `messages` is in the body: system and developer messages are not among them.
  const positions: number[] = [];
  for (const [position, each] of body.entries()) {
    if (each.role === 'system' || each.role === 'developer') {
      system.push(plainText(each.content));
      continue;
    }
    positions.push(position);
    if (each.role === 'user') messages.push({ role: 'user', content: each.content as string | ContentPart[] });
    else if (each.role === 'assistant')
      messages.push({ role: 'assistant', content: each.content == null ? null : plainText(each.content), ...(each.tool_calls ? { tool_calls: each.tool_calls } : {}) });
    else messages.push({ role: 'tool', tool_call_id: each.tool_call_id as string, content: plainText(each.content) });
  }
  if (messages.length === 0) return { ok: false, index: -1, message: 'needs a user message (or tool answers) to reply to' };
  const fault = findToolExchangeFault(messages);
  if (fault) return { ok: false, index: positions[fault.index]!, message: unpairedCall(fault) };
  const [only] = messages;
  const content = messages.length === 1 && only!.role === 'user' ? only!.content : { type: 'chat_messages' as const, messages: messages as ChatMessagesInput['messages'] };
  return { ok: true, content, ...(system.length > 0 ? { system: system.join('\n\n') } : {}) };
}

/** OpenAI's `tool_choice` as a turn's. */
export function turnToolChoice(choice: z.infer<typeof chatToolChoiceSchema>): ToolChoice {
  return typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.function.name } };
}

function plainText(content: string | { text: string }[]): string {
  return typeof content === 'string' ? content : content.map((part) => part.text).join('');
}

/** Messages that pair a tool call wrongly: OpenAI refuses them, and so would the provider. */
function unpairedCall(fault: ToolExchangeFault): string {
  switch (fault.kind) {
    case 'unanswered':
      return `its tool_calls ${fault.callIds.join(', ')} have no tool message right after it`;
    case 'unexpected_answer':
      return `the tool_call_id ${fault.callId} is not a call of the assistant message right before this run of tool messages`;
    case 'answered_twice':
      return `the tool_call_id ${fault.callId} has more than one tool message`;
  }
}
