import * as z from 'zod/mini';
import { usageSchema } from './event.js';

/**
 * Pieces the HTTP API's answers share: those the client reads (the sibling `*-answers.ts`) and
 * the server's others (src/api/contract). Written with zod/mini like the rest of the protocol;
 * the client takes only their types, so no bundle carries them.
 */

/** An ISO 8601 time, as every answer writes times. */
export const timestamp = z.iso.datetime({ offset: true });
export const count = z.int().check(z.nonnegative());
/** A copy of the event model's shape, so that answers name it as a component of its own and events keep it inline. */
export const usage = z
  .object({
    ...usageSchema.shape,
    cachedPromptTokens: z.optional(count),
    reasoningTokens: z.optional(count),
    costUsd: z.optional(z.number()).check(z.describe('From the usage ledger: what its provider calls cost, discarded attempts included; priced models only.')),
  })
  .check(z.meta({ id: 'Usage', description: 'Tokens used.' }));
/** A stored error: a code and a message, and whatever else its source gave. */
export const errorValue = z.looseObject({ code: z.string(), message: z.string() });

/** A page of a list, newest first; `nextCursor` (null on the last page) asks for the next. */
export function pageOf<T extends z.core.SomeType>(item: T) {
  return z.object({ data: z.array(item), nextCursor: z.nullable(z.string()) });
}
