import { z } from 'zod';
import type { ModelSettings } from '../providers/model-settings';
import type { ResponseFormat } from '../providers/response-format';

/** OpenAI's `text.format` of the Responses API: the flat form of Chat Completions' `response_format`. */
const textFormatSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }).strict(),
  z.object({ type: z.literal('json_object') }).strict(),
  z
    .object({
      type: z.literal('json_schema'),
      name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/),
      description: z.string().max(10_000).nullable().optional(),
      schema: z.record(z.string(), z.unknown()),
      strict: z.boolean().nullable().optional(),
    })
    .strict(),
]);

/**
 * The fields of a Responses request that change the answer and that Switchyard honours: they go
 * to the provider on every step of the response's turn (docs/API.md, "OpenAI-compatible routes").
 */
export const responseSettingsFields = {
  temperature: z.number().min(0).max(2).nullable().optional(),
  top_p: z.number().min(0).max(1).nullable().optional(),
  max_output_tokens: z.number().int().min(1).nullable().optional(),
  parallel_tool_calls: z.boolean().nullable().optional(),
  reasoning: z
    .object({ effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']).nullable().optional(), summary: z.null().optional() })
    .strict()
    .nullable()
    .optional(),
  text: z.object({ format: textFormatSchema.optional(), verbosity: z.null().optional() }).strict().nullable().optional(),
};

type ResponseSettings = { [K in keyof typeof responseSettingsFields]?: z.infer<(typeof responseSettingsFields)[K]> };

/** Why a field is refused: each is a 400 `unsupported_parameter` naming it. */
const UNSUPPORTED: Record<string, { refused: (value: unknown) => boolean; why: string }> = {
  top_logprobs: { refused: (value) => value !== 0, why: 'Switchyard runs one choice of text and returns no log probabilities' },
  include: {
    refused: (value) => Array.isArray(value) && value.some((each) => each !== 'reasoning.encrypted_content'),
    why: 'Switchyard returns no log probabilities, built-in tool outputs or images in its responses',
  },
  max_tool_calls: { refused: () => true, why: "a turn's tool calls are bounded by its steps, not by a count of calls" },
  truncation: { refused: (value) => value !== 'disabled', why: 'Switchyard does not drop input to fit a context window (conversations compact instead)' },
  'reasoning.summary': { refused: () => true, why: 'Switchyard returns no reasoning summaries' },
  'text.verbosity': { refused: () => true, why: 'verbosity is not a setting of OpenAI-compatible providers' },
  tools: {
    refused: (value) => Array.isArray(value) && value.some((tool) => typeof tool !== 'object' || tool === null || (tool as { type?: unknown }).type !== 'function'),
    why: "OpenAI's built-in tools (web_search, file_search, code_interpreter, …) do not run here: only function tools do",
  },
};

/**
 * The first field of a Responses body that Switchyard cannot honour, with why; undefined when
 * there is none. Pure: checked before the body's shape, so that a caller learns what to take out.
 */
export function unsupportedResponseParameter(body: unknown): { param: string; message: string } | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  for (const [param, { refused, why }] of Object.entries(UNSUPPORTED)) {
    const value = param.split('.').reduce<unknown>((at, key) => (typeof at === 'object' && at !== null ? (at as Record<string, unknown>)[key] : undefined), body);
    if (value === undefined || value === null || !refused(value)) continue;
    return { param, message: `${param} is not supported: ${why}` };
  }
  return undefined;
}

/** The request's settings as a turn's `modelSettings`: `max_output_tokens` is `max_tokens`, `reasoning.effort` is `reasoning_effort`. */
export function responseModelSettings(request: ResponseSettings): ModelSettings | undefined {
  const settings: ModelSettings = {};
  if (request.temperature != null) settings.temperature = request.temperature;
  if (request.top_p != null) settings.top_p = request.top_p;
  if (request.max_output_tokens != null) settings.max_tokens = request.max_output_tokens;
  if (request.parallel_tool_calls != null) settings.parallel_tool_calls = request.parallel_tool_calls;
  if (request.reasoning?.effort != null) settings.reasoning_effort = request.reasoning.effort;
  return Object.keys(settings).length > 0 ? settings : undefined;
}

/** `text.format` as a turn's `responseFormat`; `text` is no format at all. */
export function responseTextFormat(request: ResponseSettings): ResponseFormat | undefined {
  const format = request.text?.format;
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  const { name, description, schema, strict } = format;
  return { type: 'json_schema', name, schema, ...(description != null ? { description } : {}), ...(strict != null ? { strict } : {}) };
}
