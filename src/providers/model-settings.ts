import { z } from 'zod';

/**
 * The settings that change a model's answer, by OpenAI's Chat Completions names (docs/API.md,
 * "OpenAI-compatible routes"): a turn's `modelSettings`, sent with every step's request. Strict:
 * a setting Switchyard does not know would be dropped, and a dropped setting changes the answer
 * without a word.
 */
export const modelSettingsSchema = z
  .object({
    temperature: z.number().min(0).max(2),
    top_p: z.number().min(0).max(1),
    /** Per step: each completion request's cap on its output tokens. */
    max_tokens: z.number().int().min(1),
    stop: z.union([z.string().max(200), z.array(z.string().max(200)).min(1).max(4)]),
    seed: z.number().int(),
    presence_penalty: z.number().min(-2).max(2),
    frequency_penalty: z.number().min(-2).max(2),
    parallel_tool_calls: z.boolean(),
    reasoning_effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']),
  })
  .partial()
  .strict();
export type ModelSettings = z.infer<typeof modelSettingsSchema>;

/**
 * The settings as a chat-completion request's fields, pure. `parallel_tool_calls` goes only
 * with tools: OpenAI refuses it on a request that offers none.
 */
export function settingsFields(settings: ModelSettings | undefined, hasTools: boolean): Record<string, unknown> {
  if (!settings) return {};
  const { parallel_tool_calls: parallel, ...rest } = settings;
  return { ...rest, ...(parallel !== undefined && hasTools ? { parallel_tool_calls: parallel } : {}) };
}
