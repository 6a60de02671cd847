import { z } from 'zod';
import type { ChatMessage, ContentPart, ToolChoice } from '../providers/model-provider';
import { toolNameSchema, type ChatMessagesInput } from '../events/turn-content';
import { responseSettingsFields } from './response-settings';

const text = z.string().max(500_000);
const contentPart = z.discriminatedUnion('type', [
  z.object({ type: z.literal('input_text'), text }).strict(),
  // An assistant message given back as context carries its output as `output_text`.
  z.object({ type: z.literal('output_text'), text, annotations: z.array(z.unknown()).optional(), logprobs: z.array(z.unknown()).optional() }).strict(),
  z.object({ type: z.literal('input_image'), image_url: z.string().min(1).max(20_000_000), detail: z.enum(['low', 'high', 'auto']).optional() }).strict(),
]);
const content = z.union([text, z.array(contentPart).min(1).max(100)]);
const itemMeta = { id: z.string().max(200).optional(), status: z.string().max(50).optional() };
/** An item of a Responses input, or of the items a conversation is made with. */
export const inputItem = z.union([
  z.object({ type: z.literal('message').optional(), role: z.enum(['user', 'assistant', 'system', 'developer']), content, ...itemMeta }).strict(),
  z.object({ type: z.literal('function_call'), call_id: z.string().min(1).max(200), name: toolNameSchema, arguments: text, ...itemMeta }).strict(),
  z.object({ type: z.literal('function_call_output'), call_id: z.string().min(1).max(200), output: content, ...itemMeta }).strict(),
]);
const functionTool = z
  .object({
    type: z.literal('function'),
    name: toolNameSchema,
    description: z.string().max(10_000).nullable().optional(),
    parameters: z.record(z.string(), z.unknown()).nullable().optional(),
    strict: z.boolean().nullable().optional(),
  })
  .strict();
const toolChoice = z.union([z.enum(['auto', 'none', 'required']), z.object({ type: z.literal('function'), name: toolNameSchema }).strict()]);

/** OpenAI's fields that change nothing in the answer: accepted (docs/API.md, "OpenAI-compatible routes"). */
const INERT_RESPONSE_FIELDS = {
  store: z.boolean().nullable().optional(),
  user: z.string().max(500).optional(),
  service_tier: z.string().max(50).nullable().optional(),
  prompt_cache_key: z.string().max(500).optional(),
  safety_identifier: z.string().max(500).optional(),
  stream_options: z.object({ include_obfuscation: z.boolean().optional() }).strict().nullable().optional(),
  // What unsupportedResponseParameter lets through: the values that ask for nothing Switchyard lacks.
  top_logprobs: z.literal(0).nullable().optional(),
  include: z.array(z.literal('reasoning.encrypted_content')).nullable().optional(),
  truncation: z.literal('disabled').nullable().optional(),
};

/**
 * `POST /openai/v1/responses`: the subset of OpenAI's request Switchyard runs. A field that
 * changes the answer is honoured (response-settings.ts) or refused by unsupportedResponseParameter;
 * any other field is refused, as OpenAI refuses arguments it does not know.
 */
export const createResponseSchema = z
  .object({
    model: z.string().min(1).max(200).optional(),
    input: z.union([text.min(1), z.array(inputItem).min(1).max(1000)]),
    instructions: z.string().max(200_000).nullable().optional(),
    tools: z.array(functionTool).max(128).optional(),
    tool_choice: toolChoice.optional(),
    background: z.boolean().nullable().optional(),
    stream: z.boolean().nullable().optional(),
    previous_response_id: z.string().min(1).max(200).nullable().optional(),
    // OpenAI's SDK sends the id, or `{id}`.
    conversation: z
      .union([z.string().min(1).max(200), z.object({ id: z.string().min(1).max(200) }).strict()])
      .nullable()
      .optional(),
    metadata: z.record(z.string().max(64), z.string().max(512)).nullable().optional(),
    ...responseSettingsFields,
    ...INERT_RESPONSE_FIELDS,
    /** Sets the compaction policy of the response's conversation (docs/API.md, "Long conversations"). */
    context_management: z
      .array(z.object({ type: z.literal('compaction'), compact_threshold: z.int().min(64).max(100_000_000) }).strict())
      .max(1)
      .nullable()
      .optional(),
    /** An agent of the user's (docs/API.md, "Agents"): `id` is `agent_…` (or its name), `version` pins one. */
    prompt: z
      .object({
        id: z.string().min(1).max(100),
        version: z
          .union([z.string().regex(/^[1-9]\d{0,8}$/, 'a version number'), z.number().int().min(1)])
          .nullable()
          .optional(),
      })
      .strict()
      .nullable()
      .optional(),
  })
  .strict();
export type CreateResponseRequest = z.infer<typeof createResponseSchema>;

/**
 * What a response request's input becomes: its turn's input and options. Its functions are
 * split between Switchyard's tools and the caller's by function-tools.ts.
 */
export interface ResponseTurnPlan {
  content: string | ContentPart[] | ChatMessagesInput;
  instructions?: string;
  toolChoice?: ToolChoice;
  /** The input as the chat messages the model is sent after the conversation's history. */
  messages: ChatMessage[];
}

/**
 * A request as a turn, pure: its system and developer messages join `instructions`; its other
 * items become the turn's input, one user message as it is, several items (context, function
 * calls given back and their outputs) as chat messages.
 */
export function planResponseTurn(request: CreateResponseRequest): ResponseTurnPlan {
  const items = typeof request.input === 'string' ? [{ role: 'user' as const, content: request.input }] : request.input;
  const instructions = request.instructions ? [request.instructions] : [];
  const messages: ChatMessage[] = [];
  for (const item of items) {
    if (item.type === 'function_call') {
      const call = { id: item.call_id, type: 'function' as const, function: { name: item.name, arguments: item.arguments } };
      const last = messages.at(-1);
      if (last?.role === 'assistant') last.tool_calls = [...(last.tool_calls ?? []), call];
      else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
    } else if (item.type === 'function_call_output') {
      messages.push({ role: 'tool', tool_call_id: item.call_id, content: plainText(item.output) });
    } else if (item.role === 'system' || item.role === 'developer') {
      instructions.push(plainText(item.content));
    } else if (item.role === 'assistant') {
      messages.push({ role: 'assistant', content: plainText(item.content) });
    } else {
      messages.push({ role: 'user', content: userContent(item.content) });
    }
  }
  const [only] = messages;
  const turnContent: ResponseTurnPlan['content'] =
    messages.length === 1 && only!.role === 'user' ? only!.content : { type: 'chat_messages', messages: messages as ChatMessagesInput['messages'] };
  return {
    content: turnContent,
    ...(instructions.length > 0 ? { instructions: instructions.join('\n\n') } : {}),
    ...(request.tool_choice !== undefined
      ? { toolChoice: typeof request.tool_choice === 'string' ? request.tool_choice : { type: 'function', function: { name: request.tool_choice.name } } }
      : {}),
    messages,
  };
}

/** Whether a request gives the model anything to answer: a message or an output, not only instructions. */
export function hasTurnInput(plan: ResponseTurnPlan): boolean {
  return typeof plan.content === 'string' || Array.isArray(plan.content) || plan.content.messages.length > 0;
}

function plainText(value: z.infer<typeof content>): string {
  if (typeof value === 'string') return value;
  return value.map((part) => (part.type === 'input_image' ? '' : part.text)).join('');
}

function userContent(value: z.infer<typeof content>): string | ContentPart[] {
  if (typeof value === 'string') return value;
  return value.map((part): ContentPart => (part.type === 'input_image' ? { type: 'image_url', image_url: { url: part.image_url } } : { type: 'text', text: part.text }));
}
