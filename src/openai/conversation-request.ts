import { z } from 'zod';
import { inputItem } from './response-request';

const metadata = z.record(z.string().max(64), z.string().max(512)).refine((value) => Object.keys(value).length <= 16, 'at most 16 keys');

/** `POST /openai/v1/conversations`: OpenAI's body (at most 20 items, as OpenAI's). */
export const createOpenAiConversationSchema = z
  .object({
    items: z.array(inputItem).max(20).nullable().optional(),
    metadata: metadata.nullable().optional(),
  })
  .strict();
export type CreateOpenAiConversation = z.infer<typeof createOpenAiConversationSchema>;

/** `POST /openai/v1/conversations/:id`: the new `metadata`, which replaces the old. */
export const updateOpenAiConversationSchema = z.object({ metadata: metadata.nullable() }).strict();

/** `?after&limit&order` of OpenAI's item lists (`include` changes nothing Switchyard stores, and is accepted). */
export const openAiItemListQuerySchema = z.object({
  after: z.string().max(200).optional(),
  limit: z.coerce.number().int().min(1).max(100).default(20),
  order: z.enum(['asc', 'desc']).default('desc'),
  include: z.union([z.string(), z.array(z.string())]).optional(),
});
