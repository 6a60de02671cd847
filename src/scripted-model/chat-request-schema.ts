import { z } from 'zod';

/**
 * The parts of an OpenAI chat-completion request the scripted model checks, shaped as OpenAI
 * accepts them. Objects are not strict and unknown top-level fields pass: providers get many
 * (`temperature`, `seed`, vendor extensions) and rejecting them would only break clients.
 */

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const textPart = z.object({ type: z.literal('text'), text: z.string() });
const imagePart = z.object({ type: z.literal('image_url'), image_url: z.object({ url: z.string() }) });
const refusalPart = z.object({ type: z.literal('refusal'), refusal: z.string() });

// A union's own message is all zod reports when no branch fits, so it has to read well alone.
const textContent = z.union([z.string(), z.array(textPart).min(1)], { error: 'expected a string or an array of text parts' });
const userContent = z.union([z.string(), z.array(z.discriminatedUnion('type', [textPart, imagePart])).min(1)], {
  error: 'expected a string or an array of content parts',
});
const assistantContent = z.union([z.string(), z.array(z.discriminatedUnion('type', [textPart, refusalPart])).min(1)], {
  error: 'expected a string, null or an array of content parts',
});

const toolCallSchema = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string() }),
});

const messageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: textContent }),
  z.object({ role: z.literal('developer'), content: textContent }),
  z.object({ role: z.literal('user'), content: userContent }),
  z
    .object({ role: z.literal('assistant'), content: assistantContent.nullish(), tool_calls: z.array(toolCallSchema).min(1).optional() })
    .refine((message) => (message.content !== null && message.content !== undefined) || message.tool_calls !== undefined, {
      error: "an assistant message needs 'content' or 'tool_calls'",
    }),
  z.object({ role: z.literal('tool'), tool_call_id: z.string(), content: textContent }),
]);

const toolSchema = z.object({
  type: z.literal('function'),
  function: z.object({
    name: z.string().regex(TOOL_NAME, {
      error: `string does not match pattern. Expected a string that matches the pattern '${TOOL_NAME.source}'`,
    }),
    description: z.string().optional(),
    parameters: z.record(z.string(), z.unknown()).optional(),
  }),
});

const toolChoiceSchema = z.union([z.enum(['auto', 'none', 'required']), z.object({ type: z.literal('function'), function: z.object({ name: z.string() }) })], {
  error: "expected 'auto', 'none', 'required' or {type: 'function', function: {name}}",
});

export const chatRequestSchema = z.object({
  model: z.string().min(1),
  messages: z.array(messageSchema).min(1),
  stream: z.boolean().nullish(),
  stream_options: z.object({ include_usage: z.boolean().nullish() }).nullish(),
  tools: z.array(toolSchema).nullish(),
  tool_choice: toolChoiceSchema.nullish(),
  /** Structured output: the answer is JSON (structured-answer.ts). */
  response_format: z
    .object({
      type: z.enum(['text', 'json_object', 'json_schema']),
      json_schema: z.object({ name: z.string(), schema: z.record(z.string(), z.unknown()).optional() }).optional(),
    })
    .nullish(),
});

export type ChatRequest = z.infer<typeof chatRequestSchema>;
export type ChatMessage = ChatRequest['messages'][number];
export type ToolDefinition = z.infer<typeof toolSchema>;
