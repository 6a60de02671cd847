import { z } from 'zod';
import {
  compactConversationSchema,
  conversationSchema,
  conversationWithMessagesSchema,
  createConversationSchema,
  createTurnSchema,
  forkConversationSchema,
  turnAcceptedSchema,
} from '@switchyard/protocol';
import { getConversationSchema, listConversationsSchema } from '../request-schemas';
import { documentPaths, jsonResponse } from './operation';
import { idParams, pageOf } from './shared-schemas';

// The answers the client reads, and the bodies it sends, are the protocol's (@switchyard/protocol), the one source the routes and the client are typed with.

export const conversationPageSchema = pageOf(conversationSchema).check(z.meta({ id: 'ConversationPage' }));

export const conversationDeletedSchema = z.object({ id: z.string(), deleted: z.literal(true) }).meta({ id: 'ConversationDeleted' });

export const conversationPaths = documentPaths('Conversations', {
  '/v1/conversations': {
    post: {
      operationId: 'createConversation',
      summary: 'Create a conversation',
      access: 'user',
      jsonBody: createConversationSchema,
      responses: { '201': jsonResponse('The conversation.', conversationSchema) },
      errors: ['external_id_conflict', 'not_found'],
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
    delete: {
      operationId: 'deleteConversation',
      summary: 'Delete a conversation with its messages and turns; the usage ledger keeps its rows',
      description: 'Refused (409 conversation_busy, naming the active turn) while a turn is active: cancel it first.',
      access: 'user',
      requestParams: { path: idParams('conversation') },
      responses: { '200': jsonResponse('Deleted.', conversationDeletedSchema) },
      errors: ['not_found', 'conversation_busy'],
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
      errors: ['not_found', 'conversation_busy', 'idempotency_conflict', 'conflict'],
    },
  },
  '/v1/conversations/{id}/compact': {
    post: {
      operationId: 'compactConversation',
      summary: 'Summarise the conversation now, as a turn of its own',
      description:
        "Summarises the messages before the kept tail (see \"Long conversations\") under the conversation's compaction policy, or the default policy on its model's window when it has none; `instructions` replace the policy's for this compaction. The turn has no user message and no step: it ends `completed` (finishReason `compacted`, or `nothing_to_compact`). 409 while a turn is active; admitted like any turn, budgets included.",
      access: 'user',
      requestParams: { path: idParams('conversation') },
      jsonBody: compactConversationSchema,
      responses: { '202': jsonResponse('The compaction turn is accepted and will run.', turnAcceptedSchema) },
      errors: ['not_found', 'conversation_busy'],
    },
  },
  '/v1/conversations/{id}/fork': {
    post: {
      operationId: 'forkConversation',
      summary: 'Copy the path up to a message into a new conversation',
      description:
        'The new conversation has the settings of this one (not its externalId), copies of its path up to `messageId` (with the rest of its step: the tool messages that follow it), and `forkedFrom`. A step whose calls have no results yet is refused (409 conflict).',
      access: 'user',
      requestParams: { path: idParams('conversation') },
      jsonBody: forkConversationSchema,
      responses: { '201': jsonResponse('The new conversation.', conversationSchema) },
      errors: ['not_found', 'conflict'],
    },
  },
});
