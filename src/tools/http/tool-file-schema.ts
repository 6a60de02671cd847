import { TOOL_NAME_PATTERN } from '@switchyard/protocol';
import { z } from 'zod';
import { fieldListSchema } from './fields-to-json-schema';
import { toolUrlSchema } from '../tool-url-schema';

/*
 * What one entry of a tool file may say, for the two kinds declared in files: `http` (the
 * default) and `client`. Strict objects: a misspelt field (`timeout` for `timeoutMs`) is a load
 * error, not a setting silently ignored.
 */

const toolName = z.string().regex(TOOL_NAME_PATTERN, { message: 'must be 1 to 64 letters, digits, "_" or "-"' });
const inputSchema = z
  .record(z.string(), z.unknown())
  .refine((schema) => schema.type === undefined || schema.type === 'object', { message: 'must describe an object ("type": "object")' });

const eitherSchemaOrFields = (tool: { inputSchema?: unknown; fields?: unknown }) => tool.inputSchema === undefined || tool.fields === undefined;
const eitherMessage = { message: 'give either "inputSchema" or "fields", not both', path: ['fields'] };

export const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export const httpToolEntrySchema = z
  .strictObject({
    kind: z.literal('http').optional(),
    name: toolName,
    description: z.string().min(1),
    url: toolUrlSchema,
    method: z
      .string()
      .transform((method) => method.toUpperCase())
      .pipe(z.enum(HTTP_METHODS))
      .default('POST'),
    /** Values may reference `${ENV_VAR}`. */
    headers: z.record(z.string(), z.string()).default({}),
    /** Per attempt. */
    timeoutMs: z.int().min(1).max(600_000).default(10_000),
    /** Extra attempts after the first (network errors, timeouts, 408, 429, 5xx). */
    retries: z.int().min(0).max(10).default(2),
    /** A call runs only once a person approves it. */
    needsApproval: z.boolean().default(false),
    /** How long a call waits for that decision (default 24 h, at most 30 days). */
    approvalTimeoutMs: z
      .int()
      .min(1000)
      .max(30 * 86_400_000)
      .optional(),
    inputSchema: inputSchema.optional(),
    fields: fieldListSchema.optional(),
  })
  .refine(eitherSchemaOrFields, eitherMessage);

export const clientToolEntrySchema = z
  .strictObject({
    kind: z.literal('client'),
    name: toolName,
    description: z.string().min(1),
    /** How long the server waits for a client's answer. */
    timeoutMs: z.int().min(1).max(86_400_000).default(300_000),
    /** A call runs only once a person approves it. */
    needsApproval: z.boolean().default(false),
    /** How long a call waits for that decision (default 24 h, at most 30 days). */
    approvalTimeoutMs: z
      .int()
      .min(1000)
      .max(30 * 86_400_000)
      .optional(),
    inputSchema: inputSchema.optional(),
    fields: fieldListSchema.optional(),
  })
  .refine(eitherSchemaOrFields, eitherMessage);

export type HttpToolEntry = z.output<typeof httpToolEntrySchema>;
export type ClientToolEntry = z.output<typeof clientToolEntrySchema>;
