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
