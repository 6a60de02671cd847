import { z } from 'zod';
import { usageSchema } from '../../events/event';

// Pieces several areas' answers share.

/** An ISO 8601 time, as every answer writes times. */
export const timestamp = z.iso.datetime({ offset: true });
export const count = z.number().int().nonnegative();
// A classic copy of the protocol's (zod/mini) shape, for its own component.
export const usage = z.object(usageSchema.shape).meta({ id: 'Usage', description: 'Tokens used.' });
/** A stored error: a code and a message, and whatever else its source gave. */
export const errorValue = z.looseObject({ code: z.string(), message: z.string() });

/** The `:id` of a route: an id this API handed out. Anything else names nothing (404). */
export const idParams = (what: string) => z.object({ id: z.string().meta({ description: `The ${what}'s id.` }) });

/** A page of a list, newest first; `nextCursor` (null on the last page) asks for the next. */
export function pageOf<T extends z.ZodType>(item: T) {
  return z.object({ data: z.array(item), nextCursor: z.string().nullable() });
}
