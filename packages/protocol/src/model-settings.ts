import * as z from 'zod/mini';

/**
 * The settings that change a model's answer, by OpenAI's Chat Completions names (docs/API.md,
 * "OpenAI-compatible routes"): `modelSettings` of a turn, a conversation or a batch item, sent
 * with every step's request. Strict: a setting Switchyard does not know would be dropped, and a
 * dropped setting changes the answer without a word.
 */
export const modelSettingsSchema = z.strictObject({
  temperature: z.optional(z.number().check(z.gte(0), z.lte(2))),
  top_p: z.optional(z.number().check(z.gte(0), z.lte(1))),
  max_tokens: z.optional(z.int().check(z.gte(1), z.describe("Per step: each completion request's cap on its output tokens."))),
  stop: z.optional(z.union([z.string().check(z.maxLength(200)), z.array(z.string().check(z.maxLength(200))).check(z.minLength(1), z.maxLength(4))])),
  seed: z.optional(z.int()),
  presence_penalty: z.optional(z.number().check(z.gte(-2), z.lte(2))),
  frequency_penalty: z.optional(z.number().check(z.gte(-2), z.lte(2))),
  parallel_tool_calls: z.optional(z.boolean()),
  reasoning_effort: z.optional(z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh'])),
});
export type ModelSettings = z.infer<typeof modelSettingsSchema>;

const repairAttempts = z.optional(z.int().check(z.gte(0), z.lte(5), z.describe('How often an answer that does not validate is asked for again (default 1).')));

/**
 * Structured output (docs/API.md, "Structured output"): sent to the provider as `response_format`
 * on every step; the final answer is parsed and validated against `schema`.
 */
export const responseFormatSchema = z.discriminatedUnion('type', [
  z.strictObject({
    type: z.literal('json_schema'),
    name: z.string().check(z.regex(/^[a-zA-Z0-9_-]{1,64}$/, 'letters, digits, _ or -, at most 64')),
    description: z.optional(z.string().check(z.maxLength(10_000))),
    schema: z.record(z.string(), z.unknown()),
    strict: z.optional(z.boolean()),
    repairAttempts,
  }),
  z.strictObject({ type: z.literal('json_object'), repairAttempts }),
]);
export type ResponseFormat = z.infer<typeof responseFormatSchema>;
