import * as z from 'zod/mini';
import { timestamp } from './answer-fields.js';
import { compactionPolicySchema } from './conversation-requests.js';
import { modelSettingsSchema, responseFormatSchema } from './model-settings.js';

/**
 * The conversations routes' answers (docs/API.md, "Conversations"): the server types what it
 * sends with these and documents them in GET /openapi.json; the client's methods return their types.
 */

/**
 * Where a conversation was made (docs/API.md, POST /v1/conversations): `api` by POST
 * /v1/conversations, `chat` by /api/chat, `responses` and `chat.completions` by the OpenAI routes,
 * `batch` for a batch item's run, `schedule` by a schedule. A fork keeps its origin's.
 */
export const CONVERSATION_SOURCES = ['api', 'chat', 'responses', 'chat.completions', 'schedule', 'batch'] as const;
export type ConversationSource = (typeof CONVERSATION_SOURCES)[number];
export const conversationSourceSchema = z.enum(CONVERSATION_SOURCES);

// The fields of both answers below: an object with a check (its name) cannot be extended.
const conversationFields = {
  id: z.string(),
  userId: z.string(),
  externalId: z.nullable(z.string()),
  title: z.nullable(z.string()),
  system: z.nullable(z.string()),
  model: z.nullable(z.string()),
  tools: z.nullable(z.array(z.string())),
  requireApproval: z.nullable(z.array(z.string())),
  compaction: z.nullable(compactionPolicySchema).check(z.describe('Its compaction policy ("Long conversations"), null when it has none.')),
  modelSettings: z.nullable(modelSettingsSchema).check(z.describe("Sent with every step of its turns; a turn's own settings win, field by field.")),
  responseFormat: z.nullable(responseFormatSchema).check(z.describe("Its turns' structured output, unless a turn brings its own.")),
  metadata: z.nullable(z.record(z.string(), z.unknown())),
  source: conversationSourceSchema.check(z.describe('Where it was made; `GET /v1/conversations?source=` filters on it.')),
  agent: z.nullable(z.string()).check(z.describe('Its agent: `agent_…` (the latest version at each turn) or `agent_…@N` (pinned).')),
  lastSeq: z.int().check(z.nonnegative(), z.describe("The conversation's latest event seq.")),
  forkedFrom: z
    .nullable(z.object({ conversationId: z.string(), messageId: z.string() }))
    .check(z.describe('A fork: the conversation it was copied from and the message its copied path ends at.')),
  createdAt: timestamp,
  updatedAt: timestamp,
};

/** A conversation as creating, forking and listing answer it. */
export const conversationSchema = z.object(conversationFields).check(z.meta({ id: 'Conversation' }));
export type Conversation = z.infer<typeof conversationSchema>;

const assistantToolCall = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string().check(z.describe('The JSON text exactly as the model sent it.')) }),
});

export const conversationMessageSchema = z
  .object({
    id: z.string().check(z.describe("Stable (`msg_…`): what `fromMessageId` and a fork's `messageId` name.")),
    role: z.enum(['user', 'assistant', 'tool']),
    content: z.unknown().check(z.describe('Text, content parts, or null (an assistant message that only calls tools).')),
    toolCalls: z.optional(z.array(assistantToolCall)),
    toolCallId: z.optional(z.string()),
    turnId: z.nullable(z.string()),
    supersededBy: z
      .optional(z.string())
      .check(z.describe('The turn (an edit or a regenerate) that replaced this message; such messages are listed only with `?include=superseded`.')),
    incomplete: z
      .optional(z.literal(true))
      .check(z.describe("What a cancelled or interrupted step had streamed: the turn's last assistant message, its unfinished tool calls left out.")),
    reasoning: z.optional(z.string()).check(z.describe('The reasoning such a step had streamed.')),
  })
  .check(z.meta({ id: 'StoredMessage' }));
export type ConversationMessage = z.infer<typeof conversationMessageSchema>;

/** A summary that stands in, in the requests of later steps, for the messages up to `upToMessageId`. */
export const conversationCompactionSchema = z
  .object({
    id: z.string(),
    upToMessageId: z.string().check(z.describe('The last message the summary covers; steps send the messages after it.')),
    summary: z.string(),
    tokensBefore: z.int().check(z.describe("The step's request as counted before the compaction.")),
    tokensAfter: z.int().check(z.describe('The same request with the summary in place of the messages it covers.')),
    model: z.string(),
    usage: z.object({ promptTokens: z.int(), completionTokens: z.int(), totalTokens: z.int() }),
    turnId: z.string(),
    createdAt: timestamp,
  })
  .check(z.meta({ id: 'Compaction' }));
export type ConversationCompaction = z.infer<typeof conversationCompactionSchema>;

/** `GET /v1/conversations/:id`. */
export const conversationWithMessagesSchema = z
  .object({ ...conversationFields, messages: z.array(conversationMessageSchema), compactions: z.array(conversationCompactionSchema) })
  .check(
    z.meta({
      id: 'ConversationWithMessages',
      description: 'A conversation, its path (the messages no edit or regenerate replaced) in order, and `lastSeq` to subscribe after.',
    }),
  );
export type ConversationWithMessages = z.infer<typeof conversationWithMessagesSchema>;
