import { z } from 'zod';

const toolName = z.string().regex(/^[A-Za-z0-9_-]{1,64}$/, 'a tool name: letters, digits, _ or -, at most 64');

const contentPart = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text'), text: z.string() }).strict(),
  z.object({ type: z.literal('image_url'), image_url: z.object({ url: z.string().min(1) }).strict() }).strict(),
]);

/** A user message: text, or text and image parts. */
export const turnContentSchema = z.union([z.string().min(1).max(500_000), z.array(contentPart).min(1).max(100)]);

export const toolChoiceSchema = z.union([
  z.enum(['auto', 'none', 'required']),
  z.object({ type: z.literal('function'), function: z.object({ name: toolName }).strict() }).strict(),
]);

export const createConversationSchema = z
  .object({
    title: z.string().max(500).optional(),
    system: z.string().max(200_000).optional(),
    model: z.string().min(1).max(200).optional(),
    tools: z.array(toolName).max(128).optional(),
    metadata: z.record(z.string(), z.unknown()).optional(),
    externalId: z.string().min(1).max(200).optional(),
  })
  .strict();

export const listConversationsSchema = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(20),
    cursor: z.string().max(500).optional(),
    externalId: z.string().min(1).max(200).optional(),
  })
  .strict();

export const createTurnSchema = z
  .object({
    content: turnContentSchema,
    idempotencyKey: z.string().min(1).max(200).optional(),
    model: z.string().min(1).max(200).optional(),
    tools: z.array(toolName).max(128).optional(),
    toolChoice: toolChoiceSchema.optional(),
    maxSteps: z.number().int().min(1).max(100).optional(),
    maxHistoryMessages: z.number().int().min(1).max(100_000).optional(),
    onBusy: z.enum(['reject', 'enqueue', 'interrupt']).default('reject'),
  })
  .strict();

export const createUserSchema = z.object({ name: z.string().min(1).max(200) }).strict();

/** null lifts the limit; a list (possibly empty) is all the user's turns may offer. */
export const userToolsSchema = z.object({ tools: z.array(toolName).max(1000).nullable() }).strict();

/** A session token lives one minute to one day. */
export const sessionTokenSchema = z.object({ ttlSeconds: z.int().min(60).max(86_400).optional() }).strict();
