import { z } from 'zod';
import { createConversationSchema, createTurnSchema, forkConversationSchema, getConversationSchema, listConversationsSchema } from '../request-schemas';
import { documentPaths, jsonResponse } from './operation';
import { idParams, pageOf, timestamp } from './shared-schemas';
import { turnAcceptedSchema } from './turns-contract';

export const conversationSchema = z
  .object({
    id: z.string(),
    userId: z.string(),
    externalId: z.string().nullable(),
    title: z.string().nullable(),
    system: z.string().nullable(),
    model: z.string().nullable(),
    tools: z.array(z.string()).nullable(),
    requireApproval: z.array(z.string()).nullable(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    lastSeq: z.number().int().nonnegative().meta({ description: "The conversation's latest event seq." }),
    forkedFrom: z
      .object({ conversationId: z.string(), messageId: z.string() })
      .nullable()
      .meta({ description: 'A fork: the conversation it was copied from and the message its copied path ends at.' }),
    createdAt: timestamp,
    updatedAt: timestamp,
  })
  .meta({ id: 'Conversation' });

export const conversationPageSchema = pageOf(conversationSchema).meta({ id: 'ConversationPage' });

const assistantToolCall = z.object({
  id: z.string(),
  type: z.literal('function'),
  function: z.object({ name: z.string(), arguments: z.string().meta({ description: 'The JSON text exactly as the model sent it.' }) }),
});

const storedMessageSchema = z
  .object({
    id: z.string().meta({ description: 'Stable (`msg_…`): what `fromMessageId` and a fork\'s `messageId` name.' }),
    role: z.enum(['user', 'assistant', 'tool']),
    content: z.unknown().meta({ description: 'Text, content parts, or null (an assistant message that only calls tools).' }),
    toolCalls: z.array(assistantToolCall).optional(),
    toolCallId: z.string().optional(),
    turnId: z.string().nullable(),
    supersededBy: z
      .string()
      .optional()
      .meta({ description: 'The turn (an edit or a regenerate) that replaced this message; such messages are listed only with `?include=superseded`.' }),
  })
  .meta({ id: 'StoredMessage' });

export const conversationWithMessagesSchema = conversationSchema
  .extend({ messages: z.array(storedMessageSchema) })
  .meta({
    id: 'ConversationWithMessages',
    description: 'A conversation, its path (the messages no edit or regenerate replaced) in order, and `lastSeq` to subscribe after.',
  });

export const conversationPaths = documentPaths('Conversations', {
  '/v1/conversations': {
    post: {
      operationId: 'createConversation',
      summary: 'Create a conversation',
      access: 'user',
      jsonBody: createConversationSchema,
      responses: { '201': jsonResponse('The conversation.', conversationSchema) },
      errors: ['external_id_conflict'],
    },
    get: {
      operationId: 'listConversations',
      summary: "List the user's conversations, newest first",
      access: 'user',
      requestParams: { query: listConversationsSchema },
      responses: { '200': jsonResponse('A page of conversations.', conversationPageSchema) },
    },
  },
  '/v1/conversations/{id}': {
    get: {
      operationId: 'getConversation',
      summary: 'One conversation with its messages and lastSeq',
      access: 'user',
      requestParams: { path: idParams('conversation'), query: getConversationSchema },
      responses: { '200': jsonResponse('The conversation.', conversationWithMessagesSchema) },
      errors: ['not_found'],
    },
  },
  '/v1/conversations/{id}/turns': {
    post: {
      operationId: 'createTurn',
      summary: 'Post a turn (a user message, a regenerate or an edit) to run',
      description:
        'The same `idempotencyKey` on the same conversation answers the first turn (200), never a second one. `regenerate` answers the last user message (or `fromMessageId`) again; `content` with `fromMessageId` replaces that message; either supersedes what followed it, in the transaction that admits the turn. A `fromMessageId` that is not a user message on the path is a 400 and changes nothing.',
      access: 'user',
      requestParams: { path: idParams('conversation') },
      jsonBody: createTurnSchema,
      responses: {
        '202': jsonResponse('The turn is accepted and will run.', turnAcceptedSchema),
        '200': jsonResponse('The turn this idempotencyKey already made.', turnAcceptedSchema),
      },
      errors: ['not_found', 'conversation_busy', 'idempotency_conflict'],
    },
  },
  '/v1/conversations/{id}/fork': {
    post: {
      operationId: 'forkConversation',
      summary: 'Copy the path up to a message into a new conversation',
      description: 'The new conversation has the settings of this one (not its externalId), copies of its path up to `messageId` (with the tool messages of an assistant message), and `forkedFrom`.',
      access: 'user',
      requestParams: { path: idParams('conversation') },
      jsonBody: forkConversationSchema,
      responses: { '201': jsonResponse('The new conversation.', conversationSchema) },
      errors: ['not_found'],
    },
  },
});
