import { CONVERSATION_SOURCES } from '@switchyard/protocol';
import { z } from 'zod';
import { toolNameSchema } from '../events/turn-content';
import { webhookEventFilterSchema } from '../events/webhook-event-types';
import { chatIdSchema } from '../ui-chat/chat-request';

export const listConversationsSchema = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(20),
    cursor: z.string().max(500).optional(),
    externalId: z.string().min(1).max(200).optional(),
    /** `false`: a person's own conversations, without the ones batch items run in; `true`: only those. */
    batch: z.enum(['true', 'false']).optional(),
    /** Only those made there: one source or several, comma-separated (`chat,api`). */
    source: z
      .string()
      .transform((value) => value.split(',').map((each) => each.trim()))
      .pipe(z.array(z.enum(CONVERSATION_SOURCES)).min(1))
      .optional()
      .meta({ description: `Only the conversations made there, comma-separated: ${CONVERSATION_SOURCES.join(', ')}.` }),
  })
  .strict();

/** `GET /v1/conversations/:id`: `include=superseded` lists the replaced messages too. */
export const getConversationSchema = z.object({ include: z.literal('superseded').optional() }).strict();

export const createUserSchema = z.object({ name: z.string().min(1).max(200) }).strict();

/** `POST /v1/keys` and `POST /v1/admin/users/:id/keys`: a name to tell the key by, or none. */
export const createApiKeySchema = z.object({ name: z.string().min(1).max(200).optional() }).strict();

/** null lifts the limit; a list (possibly empty) is all the user's turns may offer. */
export const userToolsSchema = z.object({ tools: z.array(toolNameSchema).max(1000).nullable() }).strict();

/** A session token lives one minute to one day; `agents` limits it to those agents (ids or names). */
export const sessionTokenSchema = z.object({ ttlSeconds: z.int().min(60).max(86_400).optional(), agents: z.array(z.string().min(1).max(120)).min(1).max(100).optional() }).strict();

export const listApprovalsSchema = z
  .object({
    status: z.literal('pending').default('pending'),
    conversationId: z.string().min(1).max(200).optional(),
    limit: z.coerce.number().int().min(1).max(100).default(20),
    cursor: z.string().max(500).optional(),
  })
  .strict();

/** `Idempotency-Key`: the same key names the same batch or tool invocation. */
export const idempotencyKeyHeaderSchema = z.object({ 'idempotency-key': z.string().min(1).max(200).optional() });

export const invokeToolSchema = z.object({ params: z.record(z.string(), z.unknown()).default({}) }).strict();

export const listBatchesSchema = z
  .object({
    limit: z.coerce.number().int().min(1).max(100).default(20),
    cursor: z
      .string()
      .regex(/^\d{1,18}$/, 'not a cursor from this API')
      .optional(),
  })
  .strict();

/** An item's position is a PostgreSQL integer: a cursor past it is the client's mistake, not a query error. */
const MAX_POSITION = 2_147_483_647;
export const batchResultsSchema = z
  .object({
    after: z
      .string()
      .regex(/^(-1|\d{1,10})$/, 'an item index (-1 for the start)')
      .transform(Number)
      .pipe(z.number().max(MAX_POSITION, `at most ${MAX_POSITION}`))
      .default(-1),
  })
  .strict();

/** `GET /api/chat/:id/stream`: the chat id is the conversation's externalId. */
export const chatParamsSchema = z.object({ id: chatIdSchema });

/** `POST /v1/webhooks`: where to deliver, and which events (`*` for all). */
export const createWebhookSchema = z
  .object({
    url: z.string().min(1).max(2000),
    events: z.array(webhookEventFilterSchema).min(1),
    description: z.string().max(500).optional(),
  })
  .strict();

/** The same page query as the batch list: an ordinal cursor, newest first. */
export const listDeliveriesSchema = listBatchesSchema;
