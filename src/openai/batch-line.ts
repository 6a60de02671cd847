import { z } from 'zod';
import type { ChatMessage, ContentPart } from '../providers/model-provider';
import { findToolExchangeFault, type ToolExchangeFault } from '../providers/tool-exchange-fault';
import { chatMessagesInputSchema, toolNameSchema, turnContentSchema, type ChatMessagesInput } from '../events/turn-content';
import { fieldIssues } from '../errors/zod-issues';
import type { BatchItemSpec } from '../store/batch-item';
import { splitFunctionTools, type UsableTools } from './function-tools';

const text = z.string().max(500_000);
const message = z.discriminatedUnion('role', [
  z.object({ role: z.enum(['system', 'developer']), content: z.union([text, z.array(z.object({ type: z.literal('text'), text }).loose())]) }).loose(),
  z.object({ role: z.literal('user'), content: turnContentSchema }).loose(),
  z.object({ role: z.literal('assistant'), content: text.nullable().optional(), tool_calls: chatMessagesInputSchema.shape.messages.element.options[1].shape.tool_calls }).loose(),
  z.object({ role: z.literal('tool'), tool_call_id: z.string().min(1).max(200), content: text }).loose(),
]);
const functionTool = z
  .object({
    type: z.literal('function'),
    function: z.object({ name: toolNameSchema, description: z.string().max(10_000).optional(), parameters: z.record(z.string(), z.unknown()).nullable().optional(), strict: z.boolean().nullable().optional() }).loose(),
  })
  .loose();

/**
 * The part of a `/v1/chat/completions` body Switchyard runs; its other fields (`temperature`,
 * `max_tokens`, `response_format`, …) are accepted and ignored, as README lists.
 */
const chatCompletionBody = z
  .object({
    model: z.string().min(1).max(200),
    messages: z.array(message).min(1).max(1000),
    tools: z.array(functionTool).max(128).optional(),
    tool_choice: z.union([z.enum(['auto', 'none', 'required']), z.object({ type: z.literal('function'), function: z.object({ name: toolNameSchema }).loose() }).loose()]).optional(),
    stream: z.literal(false).optional(),
    n: z.literal(1).optional(),
  })
  .loose();

/** A line of OpenAI's Batch API input file. */
const openAiBatchLine = z
  .object({
    custom_id: z.string().min(1).max(200),
    method: z.literal('POST'),
    url: z.literal('/v1/chat/completions'),
    body: chatCompletionBody,
  })
  .strict();

/** An item value in OpenAI's shape: what tells it from a Switchyard item (which has neither field). */
export function isOpenAiBatchLine(value: unknown): boolean {
  return typeof value === 'object' && value !== null && 'custom_id' in value && 'body' in value;
}

export type OpenAiLineOutcome =
  | { ok: true; customId: string; spec: BatchItemSpec }
  /** `code`: OpenAI's, for the batch's `errors.data` (default `invalid_request`). */
  | { ok: false; problems: { field?: string; message: string; code?: string }[] };

/**
 * One line of an OpenAI Batch API file as a Switchyard batch item, pure: its system and developer
 * messages are the item's `system`; the rest is the one turn that answers the request (a single
 * user message as it is, earlier messages and tool answers as chat messages); its functions are
 * split between Switchyard's tools and the caller's as every OpenAI route splits them
 * (function-tools.ts): a step that calls one of the caller's ends the item with the calls in its
 * result, as OpenAI does.
 */
export function openAiLineToItem(value: unknown, usableTools: UsableTools): OpenAiLineOutcome {
  const parsed = openAiBatchLine.safeParse(value);
  if (!parsed.success) return { ok: false, problems: fieldIssues(parsed.error.issues).map((issue) => ({ ...(issue.field ? { field: issue.field } : {}), message: issue.message })) };
  const { custom_id: customId, body } = parsed.data;
  const system: string[] = [];
  const messages: ChatMessage[] = [];
  // Where each of `messages` is in the body: system and developer messages are not among them.
  const positions: number[] = [];
  for (const [position, each] of body.messages.entries()) {
    if (each.role === 'system' || each.role === 'developer') {
      system.push(typeof each.content === 'string' ? each.content : each.content.map((part) => part.text).join(''));
      continue;
    }
    positions.push(position);
    if (each.role === 'user') messages.push({ role: 'user', content: each.content as string | ContentPart[] });
    else if (each.role === 'assistant') messages.push({ role: 'assistant', content: each.content ?? null, ...(each.tool_calls ? { tool_calls: each.tool_calls } : {}) });
    else messages.push({ role: 'tool', tool_call_id: each.tool_call_id as string, content: each.content as string });
  }
  if (messages.length === 0) return { ok: false, problems: [{ field: 'body.messages', message: 'needs a user message (or tool answers) to reply to' }] };
  const fault = findToolExchangeFault(messages);
  if (fault) return { ok: false, problems: [{ field: `body.messages[${positions[fault.index]!}]`, message: unpairedCall(fault) }] };
  const [only] = messages;
  const content: BatchItemSpec['messages'][number] =
    messages.length === 1 && only!.role === 'user' ? only!.content : { role: 'user', content: { type: 'chat_messages', messages: messages as ChatMessagesInput['messages'] } };
  const tools = splitFunctionTools((body.tools ?? []).map((tool) => tool.function), usableTools);
  if (!tools.ok) return { ok: false, problems: [{ field: 'body.tools', message: tools.message, code: tools.code }] };
  const { serverTools, functions } = tools;
  const choice = body.tool_choice;
  return {
    ok: true,
    customId,
    spec: {
      messages: [content],
      ...(system.length > 0 ? { system: system.join('\n\n') } : {}),
      model: body.model,
      tools: serverTools,
      ...(functions.length > 0 ? { functions } : {}),
      ...(choice !== undefined ? { toolChoice: typeof choice === 'string' ? choice : { type: 'function', function: { name: choice.function.name } } } : {}),
    },
  };
}

/** A line's messages that pair a tool call wrongly: OpenAI refuses them, and so would the provider. */
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
