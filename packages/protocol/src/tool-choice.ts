import * as z from 'zod/mini';

/**
 * How a turn names its tools, as the routes take it and a turn's answer shows it back
 * (`options.toolChoice`). The server's request schemas (zod's classic API) embed these as they are.
 */

/** Every tool name, whatever its kind: what OpenAI-compatible providers accept as a function name. */
export const TOOL_NAME_PATTERN = /^[A-Za-z0-9_-]{1,64}$/;

/** A tool's name as the model and the routes name it. */
export const toolNameSchema = z.string().check(z.regex(TOOL_NAME_PATTERN, 'a tool name: letters, digits, _ or -, at most 64'));

export const toolChoiceSchema = z.union([
  z.enum(['auto', 'none', 'required']),
  z.strictObject({ type: z.literal('function'), function: z.strictObject({ name: toolNameSchema }) }),
]);
export type ToolChoice = z.infer<typeof toolChoiceSchema>;
