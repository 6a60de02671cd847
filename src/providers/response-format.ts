import { z } from 'zod';
import type { ProviderResponseFormat } from './model-provider';

/**
 * A turn's structured output (docs/API.md, "Structured output"): sent to the provider as
 * `response_format` on every step, and the final answer parsed and validated against it.
 */
export const responseFormatSchema = z.discriminatedUnion('type', [
  z
    .object({
      type: z.literal('json_schema'),
      name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/),
      description: z.string().max(10_000).optional(),
      schema: z.record(z.string(), z.unknown()),
      strict: z.boolean().optional(),
      repairAttempts: z.number().int().min(0).max(5).optional(),
    })
    .strict(),
  z.object({ type: z.literal('json_object'), repairAttempts: z.number().int().min(0).max(5).optional() }).strict(),
]);
export type ResponseFormat = z.infer<typeof responseFormatSchema>;

/** How many times an answer that does not validate is asked for again. */
export const DEFAULT_REPAIR_ATTEMPTS = 1;

/** The format as a chat-completion request's `response_format`. Pure. */
export function providerResponseFormat(format: ResponseFormat): ProviderResponseFormat {
  if (format.type === 'json_object') return { type: 'json_object' };
  return {
    type: 'json_schema',
    json_schema: {
      name: format.name,
      schema: format.schema,
      ...(format.description !== undefined ? { description: format.description } : {}),
      ...(format.strict !== undefined ? { strict: format.strict } : {}),
    },
  };
}
