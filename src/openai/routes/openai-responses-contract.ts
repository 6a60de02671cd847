import { z } from 'zod';
import { createResponseSchema } from '../response-request';
import { openAiItemListQuerySchema } from '../conversation-request';
import { openAiItemListSchema } from './openai-conversations-contract';
import { jsonResponse } from '../../api/contract/operation';
import { documentOpenAiPaths, unixSeconds } from './openai-operation';

const itemStatus = z.enum(['in_progress', 'completed', 'incomplete']);
const outputText = z.object({ type: z.literal('output_text'), text: z.string(), annotations: z.array(z.unknown()), logprobs: z.array(z.unknown()) });
const outputItem = z.discriminatedUnion('type', [
  z.object({ type: z.literal('message'), id: z.string(), status: itemStatus, role: z.literal('assistant'), content: z.array(outputText) }),
  z.object({ type: z.literal('function_call'), id: z.string(), call_id: z.string(), name: z.string(), arguments: z.string(), status: itemStatus }),
  z.object({ type: z.literal('function_call_output'), id: z.string(), call_id: z.string(), output: z.string(), status: itemStatus }),
]);

export const openAiResponseSchema = z
  .object({
    id: z.string().meta({ description: '`resp_…`' }),
    object: z.literal('response'),
    created_at: unixSeconds,
    status: z.enum(['queued', 'in_progress', 'completed', 'failed', 'cancelled', 'incomplete']),
    background: z.boolean(),
    completed_at: unixSeconds.nullable(),
    conversation: z.object({ id: z.string() }).nullable().meta({ description: 'The conversation the request named.' }),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    incomplete_details: z.object({ reason: z.string() }).nullable(),
    instructions: z.string().nullable(),
    max_output_tokens: z.number().int().nullable(),
    metadata: z.record(z.string(), z.string()),
    model: z.string(),
    output: z.array(outputItem),
    output_text: z.string().meta({ description: "The text of every message item, joined (what the SDK's `output_text` gives)." }),
    parallel_tool_calls: z.boolean(),
    previous_response_id: z.string().nullable(),
    temperature: z.number().nullable(),
    text: z.object({ format: z.object({ type: z.enum(['text', 'json_object', 'json_schema']) }).loose() }),
    tool_choice: z.unknown(),
    tools: z.array(z.unknown()),
    top_p: z.number().nullable(),
    truncation: z.literal('disabled'),
    usage: z
      .object({
        input_tokens: z.number().int(),
        input_tokens_details: z.object({ cached_tokens: z.number().int() }),
        output_tokens: z.number().int(),
        output_tokens_details: z.object({ reasoning_tokens: z.number().int() }),
        total_tokens: z.number().int(),
        cost_usd: z.number().optional().meta({ description: "Switchyard's: the usage ledger's cost of the response's turn (priced calls only); not in a batch's output lines." }),
      })
      .nullable(),
  })
  .meta({ id: 'OpenAiResponse' });

/** `GET /openai/v1/responses/:id`'s query. */
export const retrieveResponseQuerySchema = z.object({
  stream: z.enum(['true', 'false']).optional(),
  starting_after: z.coerce.number().int().min(0).optional().meta({
    description: 'With `stream=true`: the events after this `sequence_number`. At or past the end of the response, one `error` event naming `starting_after`, then the end.',
  }),
  include: z.unknown().optional().meta({ description: 'Accepted and ignored.' }),
});

const responseId = z.object({ id: z.string().meta({ description: "The response's id." }) });
const STREAM_DESCRIPTION =
  'Server-sent events named by `type`, each with a `sequence_number` counted within the response from 0: `response.created`, `response.queued`, `response.in_progress`, `response.output_item.added`, `response.content_part.added`, `response.output_text.delta`, `response.output_text.done`, `response.content_part.done`, `response.function_call_arguments.delta` / `.done`, `response.output_item.done`, then `response.completed`, `response.failed` or `response.incomplete` (cancelled, or cut short) with the stored response.';

export const openAiResponsePaths = documentOpenAiPaths({
  '/openai/v1/responses': {
    post: {
      operationId: 'openAiCreateResponse',
      summary: "Create a response (OpenAI's Responses API): in the background, streamed, or waited for",
      description:
        'Runs as a turn of a new conversation, of the one `previous_response_id` belongs to, or of `conversation`. Fields OpenAI has and Switchyard does not act on are accepted and ignored (README).',
      jsonBody: createResponseSchema,
      responses: {
        '200': {
          description: `The response (\`background: true\`: at once, \`queued\`; otherwise once it has ended). With \`stream: true\`: ${STREAM_DESCRIPTION}`,
          content: { 'application/json': { schema: openAiResponseSchema }, 'text/event-stream': { schema: { type: 'string' } } },
        },
      },
      errors: [404, 409],
    },
  },
  '/openai/v1/responses/{id}': {
    delete: {
      operationId: 'openAiDeleteResponse',
      summary: 'Delete a response: 404 after; its conversation stays',
      requestParams: { path: responseId },
      responses: { '200': jsonResponse('`{id, object: "response", deleted: true}`.', z.object({ id: z.string(), object: z.literal('response'), deleted: z.literal(true) })) },
      errors: [404, 409],
    },
    get: {
      operationId: 'openAiGetResponse',
      summary: 'A response; with `stream=true` (and `starting_after`), its stream resumed',
      requestParams: { path: responseId, query: retrieveResponseQuerySchema },
      responses: {
        '200': {
          description: `The response; with \`stream=true\` its events after \`starting_after\`, nothing lost or repeated, also after the worker that ran it died. ${STREAM_DESCRIPTION}`,
          content: { 'application/json': { schema: openAiResponseSchema }, 'text/event-stream': { schema: { type: 'string' } } },
        },
      },
      errors: [404],
    },
  },
  '/openai/v1/responses/{id}/input_items': {
    get: {
      operationId: 'openAiListResponseInputItems',
      summary: "A response's input items: what its request gave as `input`",
      description: 'Its system and developer messages went to `instructions` and are not items.',
      requestParams: { path: responseId, query: openAiItemListQuerySchema },
      responses: { '200': jsonResponse('A page of items (`order` `desc` unless told).', openAiItemListSchema) },
      errors: [404],
    },
  },
  '/openai/v1/responses/{id}/cancel': {
    post: {
      operationId: 'openAiCancelResponse',
      summary: 'Cancel a response',
      requestParams: { path: responseId },
      responses: { '200': jsonResponse('The response, cancelled (or as it ended).', openAiResponseSchema) },
      errors: [404],
    },
  },
});
