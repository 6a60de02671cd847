import { z } from 'zod';
import { createConversationSchema, createTurnSchema, listConversationsSchema } from '../request-schemas';
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
    role: z.enum(['user', 'assistant', 'tool']),
    content: z.unknown().meta({ description: 'Text, content parts, or null (an assistant message that only calls tools).' }),
    toolCalls: z.array(assistantToolCall).optional(),
    toolCallId: z.string().optional(),
    turnId: z.string().nullable(),
  })
  .meta({ id: 'StoredMessage' });

export const conversationWithMessagesSchema = conversationSchema
  .extend({ messages: z.array(storedMessageSchema) })
  .meta({ id: 'ConversationWithMessages', description: 'A conversation, its messages in order, and `lastSeq` to subscribe after.' });

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
      requestParams: { path: idParams('conversation') },
      responses: { '200': jsonResponse('The conversation.', conversationWithMessagesSchema) },
      errors: ['not_found'],
    },
  },
  '/v1/conversations/{id}/turns': {
    post: {
      operationId: 'createTurn',
      summary: 'Post a turn (a user message) to run',
      description: 'The same `idempotencyKey` on the same conversation answers the first turn (200), never a second one.',
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
});
