import { z } from 'zod';
import { createOpenAiBatchSchema } from '../openai-batches-service';
import { jsonResponse } from '../../api/contract/operation';
import { documentOpenAiPaths, openAiListOf, unixSeconds } from './openai-operation';

const at = unixSeconds.nullable();
export const openAiBatchSchema = z
  .object({
    id: z.string(),
    object: z.literal('batch'),
    endpoint: z.string(),
    errors: z
      .object({ object: z.literal('list'), data: z.array(z.object({ code: z.string(), message: z.string(), line: z.number().int().nullable(), param: z.string().nullable() })) })
      .nullable(),
    input_file_id: z.string(),
    completion_window: z.string(),
    status: z.enum(['validating', 'failed', 'in_progress', 'finalizing', 'completed', 'expired', 'cancelling', 'cancelled']),
    output_file_id: z.string().nullable(),
    error_file_id: z.string().nullable(),
    created_at: unixSeconds,
    in_progress_at: at,
    expires_at: at,
    finalizing_at: at,
    completed_at: at,
    failed_at: at,
    expired_at: at,
    cancelling_at: at,
    cancelled_at: at,
    request_counts: z.object({ total: z.number().int(), completed: z.number().int(), failed: z.number().int() }),
    usage: z.object({
      input_tokens: z.number().int(),
      input_tokens_details: z.object({ cached_tokens: z.number().int() }),
      output_tokens: z.number().int(),
      output_tokens_details: z.object({ reasoning_tokens: z.number().int() }),
      total_tokens: z.number().int(),
    }),
    metadata: z.record(z.string(), z.string()).nullable(),
  })
  .meta({ id: 'OpenAiBatch' });

export const openAiBatchListSchema = openAiListOf(openAiBatchSchema).meta({ id: 'OpenAiBatchList' });

export const openAiBatchListQuerySchema = z.object({ after: z.string().max(200).optional(), limit: z.coerce.number().int().min(1).max(100).default(20) });

const batchId = z.object({ id: z.string().meta({ description: "The batch's id (the Switchyard batch's too)." }) });

export const openAiBatchPaths = documentOpenAiPaths({
  '/openai/v1/batches': {
    post: {
      operationId: 'openAiCreateBatch',
      summary: "Create a batch from an uploaded file of `/v1/chat/completions` lines (OpenAI's Batch API)",
      description:
        'Runs as a Switchyard batch of the same id (its priorities, progress events and webhooks). A file with a bad line makes a `failed` batch whose `errors` name every bad line.',
      jsonBody: createOpenAiBatchSchema,
      responses: { '200': jsonResponse('The batch.', openAiBatchSchema) },
      errors: [404],
    },
    get: {
      operationId: 'openAiListBatches',
      summary: "The user's batches, newest first",
      requestParams: { query: openAiBatchListQuerySchema },
      responses: { '200': jsonResponse('A page of batches.', openAiBatchListSchema) },
    },
  },
  '/openai/v1/batches/{id}': {
    get: {
      operationId: 'openAiGetBatch',
      summary: 'One batch; once it has ended, with its output and error files',
      requestParams: { path: batchId },
      responses: { '200': jsonResponse('The batch.', openAiBatchSchema) },
      errors: [404],
    },
  },
  '/openai/v1/batches/{id}/cancel': {
    post: {
      operationId: 'openAiCancelBatch',
      summary: 'Cancel a batch: the items that ended keep their results',
      requestParams: { path: batchId },
      responses: { '200': jsonResponse('The batch, cancelling (or as it ended).', openAiBatchSchema) },
      errors: [404],
    },
  },
});
