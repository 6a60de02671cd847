import { z } from 'zod';

// Pieces several areas' answers share: those of the clients' answers are the protocol's.
export { count, errorValue, pageOf, timestamp, usage } from '@switchyard/protocol';

/** The `:id` of a route: an id this API handed out. Anything else names nothing (404). */
export const idParams = (what: string) => z.object({ id: z.string().meta({ description: `The ${what}'s id.` }) });
