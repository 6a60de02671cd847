import { z } from 'zod';
import { chatFunctionToolSchema, chatMessageSchema, chatToolChoiceSchema } from './chat-messages';
import type { ModelSettings } from '../providers/model-settings';
import type { ResponseFormat } from '../providers/response-format';

/** OpenAI's `response_format` of Chat Completions. */
export const chatResponseFormatSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('text') }).strict(),
  z.object({ type: z.literal('json_object') }).strict(),
  z
    .object({
      type: z.literal('json_schema'),
      json_schema: z
        .object({
          name: z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/),
          description: z.string().max(10_000).optional(),
          schema: z.record(z.string(), z.unknown()).optional(),
          strict: z.boolean().nullable().optional(),
        })
        .strict(),
    })
    .strict(),
]);

const nonNegative = z.number().min(-2).max(2);

/**
 * `POST /openai/v1/chat/completions` (docs/API.md, "OpenAI-compatible routes"): OpenAI's body.
 * Every field that changes the answer is one Switchyard honours (the settings go to the provider
 * on every step) or one `unsupportedChatParameter` refuses; the fields that change nothing are
 * accepted; any other field is refused, as OpenAI refuses arguments it does not know.
 */
export const createChatCompletionSchema = z
  .object({
    model: z.string().min(1).max(200),
    messages: z.array(chatMessageSchema).min(1).max(1000),
    tools: z.array(chatFunctionToolSchema).max(128).optional(),
    tool_choice: chatToolChoiceSchema.optional(),
    stream: z.boolean().nullable().optional(),
    stream_options: z.object({ include_usage: z.boolean().nullable().optional() }).loose().nullable().optional(),
    response_format: chatResponseFormatSchema.optional(),
    temperature: z.number().min(0).max(2).nullable().optional(),
    top_p: z.number().min(0).max(1).nullable().optional(),
    max_tokens: z.number().int().min(1).nullable().optional(),
    max_completion_tokens: z.number().int().min(1).nullable().optional(),
    stop: z
      .union([z.string().max(200), z.array(z.string().max(200)).max(4)])
      .nullable()
      .optional(),
    seed: z.number().int().nullable().optional(),
    presence_penalty: nonNegative.nullable().optional(),
    frequency_penalty: nonNegative.nullable().optional(),
    parallel_tool_calls: z.boolean().nullable().optional(),
    reasoning_effort: z.enum(['none', 'minimal', 'low', 'medium', 'high', 'xhigh']).nullable().optional(),
    // What OpenAI's SDKs send and Switchyard cannot honour otherwise than as OpenAI's defaults.
    n: z.literal(1).nullable().optional(),
    logprobs: z.literal(false).nullable().optional(),
    // Fields that change nothing in the answer.
    user: z.string().max(500).optional(),
    store: z.boolean().nullable().optional(),
    service_tier: z.string().max(50).nullable().optional(),
    prompt_cache_key: z.string().max(500).optional(),
    safety_identifier: z.string().max(500).optional(),
    metadata: z.record(z.string().max(64), z.string().max(512)).nullable().optional(),
  })
  .strict();
export type CreateChatCompletionRequest = z.infer<typeof createChatCompletionSchema>;

/** Fields that change the answer in ways Switchyard cannot honour: each is a 400 naming it. */
const UNSUPPORTED: Record<string, (value: unknown) => boolean> = {
  n: (value) => value !== 1,
  logprobs: (value) => value === true,
  top_logprobs: () => true,
  audio: () => true,
  modalities: (value) => !(Array.isArray(value) && value.every((each) => each === 'text')),
  logit_bias: () => true,
  prediction: () => true,
  web_search_options: () => true,
  functions: () => true,
  function_call: () => true,
  verbosity: () => true,
};

/**
 * The first field of a body that Switchyard cannot honour, with why; undefined when there is
 * none. Pure: checked before the body's shape, so that a caller learns what to take out.
 */
export function unsupportedChatParameter(body: unknown): { param: string; message: string } | undefined {
  if (typeof body !== 'object' || body === null) return undefined;
  for (const [param, refused] of Object.entries(UNSUPPORTED)) {
    const value = (body as Record<string, unknown>)[param];
    if (value === undefined || value === null || !refused(value)) continue;
    return { param, message: `${param} is not supported: Switchyard runs one choice of text and calls on an OpenAI-compatible provider` };
  }
  return undefined;
}

/** The request's settings as a turn's `modelSettings` (docs/API.md): `max_completion_tokens` is `max_tokens`. */
export function chatModelSettings(request: CreateChatCompletionRequest): ModelSettings | undefined {
  const settings: ModelSettings = {};
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (request.temperature != null) settings.temperature = request.temperature;
  if (request.top_p != null) settings.top_p = request.top_p;
  if (maxTokens != null) settings.max_tokens = maxTokens;
  if (request.stop != null && (typeof request.stop === 'string' || request.stop.length > 0)) settings.stop = request.stop;
  if (request.seed != null) settings.seed = request.seed;
  if (request.presence_penalty != null) settings.presence_penalty = request.presence_penalty;
  if (request.frequency_penalty != null) settings.frequency_penalty = request.frequency_penalty;
  if (request.parallel_tool_calls != null) settings.parallel_tool_calls = request.parallel_tool_calls;
  if (request.reasoning_effort != null) settings.reasoning_effort = request.reasoning_effort;
  return Object.keys(settings).length > 0 ? settings : undefined;
}

/** `response_format` as a turn's `responseFormat`; `text` is no format at all. */
export function chatResponseFormat(format: CreateChatCompletionRequest['response_format']): ResponseFormat | undefined {
  if (!format || format.type === 'text') return undefined;
  if (format.type === 'json_object') return { type: 'json_object' };
  const { name, description, schema, strict } = format.json_schema;
  return { type: 'json_schema', name, schema: schema ?? {}, ...(description !== undefined ? { description } : {}), ...(strict != null ? { strict } : {}) };
}
