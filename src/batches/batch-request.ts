import { z } from 'zod';
import { partialItemSchema, type BatchDefaults, type BatchOptions } from '../store/batch-item';
import { AppError } from '../errors/app-error';
import { describeZodIssues, fieldIssues } from '../errors/zod-issues';
import { findUnstorableValue } from '../storable/storable-json';

/** The highest `concurrency` a batch may ask for (docs/API.md: "at most a documented limit"). */
export const MAX_BATCH_CONCURRENCY = 256;
export const DEFAULT_BATCH_CONCURRENCY = 8;
/** `priority` orders batches among themselves: higher runs first. */
export const DEFAULT_BATCH_PRIORITY = 5;
export const MAX_BATCH_PRIORITY = 9;

/** A batch's options: in a JSON body, or as the query parameters of a JSONL one. */
export const batchOptionsSchema = z
  .object({
    concurrency: z.coerce.number().int().min(1).max(MAX_BATCH_CONCURRENCY).default(DEFAULT_BATCH_CONCURRENCY),
    priority: z.coerce.number().int().min(0).max(MAX_BATCH_PRIORITY).default(DEFAULT_BATCH_PRIORITY),
    skipInvalid: z.union([z.boolean(), z.enum(['true', 'false']).transform((value) => value === 'true')]).default(false),
  })
  .strict();
/** A JSON submission, its items still to be checked one by one (store/batch-item.ts). */
export const batchJsonBodySchema = batchOptionsSchema.extend({
  items: z.array(z.unknown()),
  metadata: z.record(z.string(), z.unknown()).optional(),
  defaults: partialItemSchema
    .omit({ customId: true })
    .extend({ agent: z.string().min(1).max(120).optional().meta({ description: 'An agent every item runs on (`agent_…`, its name, `@N` to pin).' }) })
    .optional(),
});

/** A JSON submission read up to its items: the options, and the items still to be checked one by one. */
export interface JsonBatch {
  options: BatchOptions;
  defaults: BatchDefaults;
  items: unknown[];
}

/**
 * A JSON submission (`{items, concurrency?, priority?, metadata?, defaults?, skipInvalid?}`):
 * its options checked, what it gives every item (`metadata`, `defaults`) checked storable
 * before anything serialises it (a value nested 100,000 deep would overflow the stack). Pure.
 */
export function readJsonBatch(body: unknown, query: Record<string, unknown>): JsonBatch {
  if (Object.keys(query).length > 0) throw new AppError('invalid_request', 'with a JSON body, the options go in the body, not the query');
  if (typeof body === 'object' && body !== null && !Array.isArray(body)) {
    const { items: _items, ...rest } = body as Record<string, unknown>;
    const unstorable = findUnstorableValue(rest);
    if (unstorable) throw new AppError('invalid_request', `invalid batch: ${unstorable.field}: ${unstorable.message}`, [{ line: 0, ...unstorable }]);
  }
  const parsed = batchJsonBodySchema.safeParse(body);
  if (!parsed.success) {
    throw new AppError(
      'invalid_request',
      `invalid batch: ${describeZodIssues(parsed.error.issues)}`,
      fieldIssues(parsed.error.issues).map((issue) => ({ line: 0, ...issue })),
    );
  }
  const { items, defaults, metadata, ...options } = parsed.data;
  return { options: { ...options, ...(metadata ? { metadata } : {}) }, defaults: defaults ?? {}, items };
}

/** A JSONL submission's options, from its query parameters. Pure. */
export function readJsonlOptions(query: Record<string, unknown>): BatchOptions {
  const parsed = batchOptionsSchema.safeParse(query);
  if (!parsed.success) {
    throw new AppError(
      'invalid_request',
      `invalid batch options: ${describeZodIssues(parsed.error.issues)}`,
      fieldIssues(parsed.error.issues).map((issue) => ({ line: 0, ...issue })),
    );
  }
  return parsed.data;
}
