import * as z from 'zod/mini';

/**
 * A user message as the routes take it: text, or text and image parts (a turn's content, a batch
 * item's messages, a chat message of the OpenAI-compatible routes). zod/mini like the rest of the
 * protocol; the server's request schemas (zod's classic API) embed it as it is.
 */

const contentPart = z.discriminatedUnion('type', [
  z.strictObject({ type: z.literal('text'), text: z.string() }),
  z.strictObject({ type: z.literal('image_url'), image_url: z.strictObject({ url: z.string().check(z.minLength(1)) }) }),
]);

export const turnContentSchema = z.union([z.string().check(z.minLength(1), z.maxLength(500_000)), z.array(contentPart).check(z.minLength(1), z.maxLength(100))]);
/** A turn's user message as the client sends it. */
export type TurnContent = z.input<typeof turnContentSchema>;
