import * as z from 'zod/mini';
import { timestamp } from './answer-fields.js';

/**
 * The conversations routes' answers (docs/API.md, "Conversations"): the server types what it
 * sends with these and documents them in GET /openapi.json; the client's methods return their types.
 */

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
  metadata: z.nullable(z.record(z.string(), z.unknown())),
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

/** `GET /v1/conversations/:id`. */
export const conversationWithMessagesSchema = z.object({ ...conversationFields, messages: z.array(conversationMessageSchema) }).check(
  z.meta({
    id: 'ConversationWithMessages',
    description: 'A conversation, its path (the messages no edit or regenerate replaced) in order, and `lastSeq` to subscribe after.',
  }),
);
export type ConversationWithMessages = z.infer<typeof conversationWithMessagesSchema>;
