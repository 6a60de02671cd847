import { z } from 'zod';
import { jsonResponse } from '../../api/contract/operation';
import { createOpenAiConversationSchema, openAiItemListQuerySchema, updateOpenAiConversationSchema } from '../conversation-request';
import { documentOpenAiPaths, openAiListOf, unixSeconds } from './openai-operation';

export const openAiConversationSchema = z
  .object({
    id: z.string().meta({ description: 'The Switchyard conversation: the same id works on `/v1`.' }),
    object: z.literal('conversation'),
    created_at: unixSeconds,
    metadata: z.record(z.string(), z.unknown()),
  })
  .meta({ id: 'OpenAiConversation' });

const inputContent = z.discriminatedUnion('type', [
  z.object({ type: z.literal('input_text'), text: z.string() }),
  z.object({ type: z.literal('input_image'), image_url: z.string(), detail: z.literal('auto') }),
]);
const outputText = z.object({ type: z.literal('output_text'), text: z.string(), annotations: z.array(z.unknown()), logprobs: z.array(z.unknown()) });
const status = z.enum(['completed', 'incomplete']);
const item = z.union([
  z.object({ type: z.literal('message'), id: z.string(), status, role: z.literal('user'), content: z.array(inputContent) }),
  z.object({ type: z.literal('message'), id: z.string(), status, role: z.literal('assistant'), content: z.array(outputText) }),
  z.object({ type: z.literal('function_call'), id: z.string(), call_id: z.string(), name: z.string(), arguments: z.string(), status: z.literal('completed') }),
  z.object({ type: z.literal('function_call_output'), id: z.string(), call_id: z.string(), output: z.string(), status: z.literal('completed') }),
]);

/** A page of a conversation's items, or of a response's input items. */
export const openAiItemListSchema = openAiListOf(item).meta({ id: 'OpenAiItemList' });

const conversationId = z.object({ id: z.string().meta({ description: "The conversation's id." }) });

export const openAiConversationPaths = documentOpenAiPaths({
  '/openai/v1/conversations': {
    post: {
      operationId: 'openAiCreateConversation',
      summary: "Create a conversation (OpenAI's Conversations API), with items as its history",
      description:
        'A Switchyard conversation, kept `OPENAI_RETENTION_DAYS` after its last turn. System and developer items become its system prompt; the others the history its first response follows. Items may end with function calls the first response answers; any other unpaired call is a 400 naming `items`.',
      jsonBody: createOpenAiConversationSchema,
      responses: { '200': jsonResponse('The conversation.', openAiConversationSchema) },
    },
  },
  '/openai/v1/conversations/{id}': {
    get: {
      operationId: 'openAiGetConversation',
      summary: 'One conversation',
      requestParams: { path: conversationId },
      responses: { '200': jsonResponse('The conversation.', openAiConversationSchema) },
      errors: [404],
    },
    post: {
      operationId: 'openAiUpdateConversation',
      summary: "Replace a conversation's metadata",
      requestParams: { path: conversationId },
      jsonBody: updateOpenAiConversationSchema,
      responses: { '200': jsonResponse('The conversation.', openAiConversationSchema) },
      errors: [404],
    },
    delete: {
      operationId: 'openAiDeleteConversation',
      summary: 'Delete a conversation, as `DELETE /v1/conversations/:id` (409 while a turn is active)',
      requestParams: { path: conversationId },
      responses: {
        '200': jsonResponse(
          '`{id, object: "conversation.deleted", deleted: true}`.',
          z.object({ id: z.string(), object: z.literal('conversation.deleted'), deleted: z.literal(true) }),
        ),
      },
      errors: [404, 409],
    },
  },
  '/openai/v1/conversations/{id}/items': {
    get: {
      operationId: 'openAiListConversationItems',
      summary: "A conversation's items: its messages, function calls and their outputs",
      requestParams: { path: conversationId, query: openAiItemListQuerySchema },
      responses: { '200': jsonResponse('A page of items (`order` `desc` unless told).', openAiItemListSchema) },
      errors: [404],
    },
  },
});
