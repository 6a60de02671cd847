import { z } from 'zod';
import { batchJsonBodySchema, batchOptionsSchema } from '../../batches/batch-request';
import { itemSchema } from '../../store/batch-item';
import { batchResultsSchema, idempotencyKeyHeaderSchema, listBatchesSchema } from '../request-schemas';
import { documentPaths, eventStreamResponse, jsonResponse } from './operation';
import { count, errorValue, idParams, pageOf, timestamp, usage } from './shared-schemas';

const batchItem = itemSchema.meta({
  id: 'BatchItem',
  description: 'One conversation to run: its user messages run as successive turns; `defaults` fills what it leaves out.',
});

const batchCountsSchema = z
  .object({
    total: count,
    queued: count,
    running: count,
    waiting: count.check(z.describe('Of the running items, those whose turn waits for a person\'s approval (see "Tool approvals").')),
    succeeded: count,
    failed: count,
    cancelled: count,
  })
  .meta({ id: 'BatchCounts' });

const batchStatus = z.enum(['queued', 'running', 'completed', 'cancelling', 'cancelled']);

export const batchSchema = z
  .object({
    id: z.string(),
    status: batchStatus,
    concurrency: z.number().int(),
    priority: z.number().int(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    skipped: z.array(z.object({ line: z.number().int(), message: z.string() })).meta({ description: 'Items left out by `skipInvalid`.' }),
    counts: batchCountsSchema,
    usage,
    createdAt: timestamp,
    startedAt: z.nullable(timestamp),
    finishedAt: z.nullable(timestamp),
    etaSeconds: z.number().nonnegative().nullable().meta({ description: 'While running, once an item has ended.' }),
  })
  .meta({ id: 'Batch' });

export const batchSubmittedSchema = batchSchema.extend({ batchId: z.string() }).meta({ id: 'BatchSubmitted' });
export const batchRetriedSchema = batchSchema.extend({ requeued: count.check(z.describe('Failed items run again.')) }).meta({ id: 'BatchRetried' });
export const batchPageSchema = pageOf(batchSchema).check(z.meta({ id: 'BatchPage' }));

export const batchResultLineSchema = z
  .object({
    index: count.check(z.describe("The item's 0-based position in the submission.")),
    customId: z.string().optional(),
    conversationId: z.string().nullable(),
    status: z.enum(['queued', 'running', 'succeeded', 'failed', 'cancelled']),
    text: z.string(),
    messageId: z
      .string()
      .optional()
      .meta({ description: "The stored message `text` is (`GET /v1/conversations/:id`), for an edit, a regenerate or a fork of the item's conversation." }),
    toolCalls: z.array(z.object({ toolName: z.string(), args: z.unknown(), result: z.unknown().optional(), error: z.unknown().optional(), attempts: count })),
    usage,
    error: z.optional(errorValue),
    output: z.unknown().optional().meta({ description: "With a responseFormat: the item's last answer, parsed and validated." }),
    agentId: z.string().optional().meta({ description: "The agent the item's last turn ran on (`defaults.agent`)." }),
    agentVersion: z.number().int().optional().meta({ description: 'Its version, resolved when that turn was admitted.' }),
  })
  .meta({ id: 'BatchResultLine' });

const batchId = idParams('batch');

export const batchPaths = documentPaths('Batches', {
  '/v1/batches': {
    post: {
      operationId: 'createBatch',
      summary: 'Submit a batch of conversations to run',
      description:
        'JSON `{items, …options}`, or JSONL (one item a line) with the options as query parameters. Bad input refuses the whole batch (400, `details: [{line, field?, message}]`) unless `skipInvalid`.',
      access: 'user',
      requestParams: { header: idempotencyKeyHeaderSchema, query: batchOptionsSchema.partial() },
      requestBody: {
        required: true,
        description: 'JSON, or JSONL (`application/x-ndjson` or `application/jsonl`) with one `BatchItem` per line.',
        content: {
          'application/json': { schema: batchJsonBodySchema.extend({ items: z.array(batchItem) }) },
          'application/x-ndjson': { schema: batchItem },
        },
      },
      responses: {
        '202': jsonResponse('The batch is accepted; its items run from here on.', batchSubmittedSchema),
        '200': jsonResponse('The batch this Idempotency-Key already made.', batchSubmittedSchema),
      },
      errors: ['idempotency_conflict'],
    },
    get: {
      operationId: 'listBatches',
      summary: "List the user's batches, newest first",
      access: 'user',
      requestParams: { query: listBatchesSchema },
      responses: { '200': jsonResponse('A page of batches.', batchPageSchema) },
    },
  },
  '/v1/batches/{id}': {
    get: {
      operationId: 'getBatch',
      summary: "A batch's status, counts, usage and timings",
      access: 'user',
      requestParams: { path: batchId },
      responses: { '200': jsonResponse('The batch.', batchSchema) },
      errors: ['not_found'],
    },
  },
  '/v1/batches/{id}/results': {
    get: {
      operationId: 'getBatchResults',
      summary: 'One JSONL line per ended item, in input order',
      access: 'user',
      requestParams: { path: batchId, query: batchResultsSchema },
      responses: {
        '200': {
          description: 'Each line is a `BatchResultLine`.',
          content: { 'application/x-ndjson': { schema: batchResultLineSchema } },
        },
      },
      errors: ['not_found'],
    },
  },
  '/v1/batches/{id}/events': {
    get: {
      operationId: 'streamBatchEvents',
      summary: "A batch's progress as server-sent events",
      access: 'user',
      requestParams: { path: batchId },
      responses: {
        '200': eventStreamResponse(
          '`event: batch-progress` with `{batchId, counts, usage}`, then `event: batch-finish` with `{batchId, status, counts}`; the stream ends with the batch.',
        ),
      },
      errors: ['not_found'],
    },
  },
  '/v1/batches/{id}/cancel': {
    post: {
      operationId: 'cancelBatch',
      summary: 'Stop the items not yet ended',
      access: 'user',
      requestParams: { path: batchId },
      responses: { '200': jsonResponse('The batch as it is now.', batchSchema) },
      errors: ['not_found'],
    },
  },
  '/v1/batches/{id}/retry': {
    post: {
      operationId: 'retryBatch',
      summary: 'Run the failed items again',
      access: 'user',
      requestParams: { path: batchId },
      responses: { '200': jsonResponse('The batch as it is now, and how many items run again.', batchRetriedSchema) },
      errors: ['not_found', 'conflict'],
    },
  },
});
