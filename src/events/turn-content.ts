import { z } from 'zod';

/** A tool's name as the model and the routes name it. */
export const toolNameSchema = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a tool name: letters, digits, _ or -, at most 64');

const contentPart = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }).strict(),
  z.object({ type: z.literal('image_url'), image_url: z.object({ url: z.string().min(1) }).strict() }).strict(),
]);

/** A user message: text, or text and image parts (a turn's content, a batch item's messages). */
export const turnContentSchema = z.union([z.string().min(1).max(500_000), z.array(contentPart).min(1).max(100)]);

export const toolChoiceSchema = z.union([
  z.enum(['auto', 'none', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: toolNameSchema }).strict() }).strict(),
]);

const chatMessageSchema = z.discriminatedUnion('role', [
  z.object({ role: z.literal('user'), content: turnContentSchema }).strict(),
  z
    .object({
      role: z.literal('assistant'),
      content: z.string().max(500_000).nullable(),
      tool_calls: z
        .array(z.object({ id: z.string().min(1).max(200), type: z.literal('function'), function: z.object({ name: toolNameSchema, arguments: z.string().max(500_000) }).strict() }).strict())
        .max(128)
        .optional(),
    })
    .strict(),
  z.object({ role: z.literal('tool'), tool_call_id: z.string().min(1).max(200), content: z.string().max(500_000) }).strict(),
]);

/**
 * A turn's input given as chat messages rather than one user message (the OpenAI-compatible
 * routes: earlier messages of a request, and the caller's answers to its own function calls):
 * sent to the model as they are, in place of the turn's user message.
 */
export const chatMessagesInputSchema = z
  .object({ type: z.literal('chat_messages'), messages: z.array(chatMessageSchema).min(1).max(1000) })
  .strict();
export type ChatMessagesInput = z.infer<typeof chatMessagesInputSchema>;
