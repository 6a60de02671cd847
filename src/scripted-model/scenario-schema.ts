import { z } from 'zod';
import { describeZodIssues } from '../errors/zod-issues';

/**
 * # Scenarios: telling the scripted model what to answer
 *
 * A scenario is JSON, taken from the `x-scripted-scenario` request header, else from the last
 * user message containing `[[scripted <json>]]` (the JSON runs from after `[[scripted ` to the
 * last `]]` of that message; the text parts of a content array are joined with newlines). A
 * scenario that is not valid JSON or not a valid scenario gets a 400 saying what is wrong (and
 * where: `steps[1].toolCalls[0].name: …`). Without a scenario, the default behaviour answers.
 *
 * A scenario is one step (shorthand) or `{"steps": [step, ...]}`. Which step answers is the
 * number of assistant messages after the user message the scenario came from (for the header:
 * the last user message): `steps[0]` answers that message, `steps[1]` the request after one
 * tool round, and so on. Past the last step, the default behaviour answers (without pauses).
 *
 * A step may instead be `{"attempts": [step, ...]}`: the k-th arrival of the same request (same
 * `messages`, k counting from 0) is answered by `attempts[min(k, length - 1)]`, to script
 * failures that a retry gets past.
 *
 * Step fields, all optional:
 * - `text`: the answer, streamed as word-ish tokens (a word with the space before it, or a
 *   symbol: "Hello", " world", "."); the deltas join back to exactly this text.
 * - `tokens`: N deterministic filler tokens ("lorem ipsum dolor …") instead; `text` wins.
 * - `reasoning`: streamed first, as `delta.reasoning_content` tokens.
 * - `tokenDelayMs` (default 0): pause per token before each chunk after the first.
 *   `firstTokenDelayMs` (default 0): pause before the first chunk (the headers go at once).
 *   `chunkTokens` (default 1): text or reasoning tokens per chunk.
 * - `toolCalls`: `[{"name", "arguments"?: object | string, "id"?}]`, made after the text; string
 *   arguments are sent verbatim, so they may be invalid JSON; default arguments `{}`. Or
 *   `"offered"`: one call per tool the request offers (`tools`, narrowed by `tool_choice`; at
 *   most `maxOfferedCalls`, default 3), with arguments sampled from each tool's JSON Schema
 *   (required properties only: a default, example or first enum value, else a plain value of
 *   the type). The finish reason becomes `tool_calls`.
 * - How calls are fragmented: `argumentChunkChars` (default 7) splits the arguments text every
 *   N characters; `splitArgumentsAt: [offsets]` splits it at those character offsets instead
 *   (inside strings and `\uXXXX` escapes too). `interleave` (default false) alternates the
 *   fragments of parallel calls round-robin. `fragmentStyle`: `"openai"` (default: the first
 *   fragment of a call has `index`, `id`, `type` and `function: {name, arguments: ""}`, later
 *   ones only `index` and `function.arguments`), `"vllm"` (the first fragment already carries
 *   the first piece of arguments) or `"split-name"` (the name comes in two fragments, the id
 *   only with the second, as some providers send them). `omitIds: true` sends no ids at all. Ids are `call_0`,
 *   `call_1`, … in every answer (some providers reuse ids across requests), unless given.
 * - `error: {"status", "message"?, "type"?, "code"?, "retryAfterSeconds"?}`: answer with this
 *   HTTP status (400-599), an OpenAI error body and a `Retry-After` header when given, instead
 *   of a completion.
 * - `cutAfterTokens: N`: stream N tokens, then drop the connection (no finish, no `[DONE]`).
 * - `stallAfterTokens: N`: stream N tokens (0: the headers only), then send nothing more,
 *   holding the connection open until the client gives up or the server closes.
 * - `errorEventAfterTokens: N`: after N tokens send `data: {"error": {...}}` and end the stream
 *   (a 200 that fails). These three exclude each other.
 * - `omitFinishReason: true`: end the stream (usage and `[DONE]` included) with no
 *   `finish_reason`.
 * - `finishReason`: instead of `stop` (or `tool_calls` when the step calls tools), e.g. `length`.
 * - `invalidOutput: true`: with `response_format`, answer JSON that does not fit the schema.
 *
 * Structured output: a request with `response_format` `json_schema` is answered, where its step
 * gives no `text`, `tokens` or `toolCalls`, with JSON that fits the schema (its sample, as for
 * offered tool calls, required properties only); `json_object` with `{}`. `invalidOutput` answers
 * the schema's sample less its first required property (or a value of another type), or for
 * `json_object` text that is not JSON. A step's `text` is sent as it is, JSON or not. Switchyard
 * asks again after an answer that does not validate, in a user message of its own after the
 * rejected answer: a `response_format` request whose last user message has no scenario takes the
 * scenario of the user message before that answer, so `steps[1]` answers the first repair.
 *
 * Tokens, for the `…AfterTokens` counts and `usage.completion_tokens`, are reasoning and text
 * tokens plus one per tool-call fragment. Non-streaming requests get the same answer whole,
 * after the sum of its pauses.
 *
 * Default behaviour (no scenario, or past its last step): with `response_format`, JSON that
 * fits it (unless the request is told to use tools); after tool results, a summary of
 * them (`Tool results: calculator → {"result":4}; current_time → …`); when the last user
 * message says "use tools" (or `tool_choice` requires a call) and tools are offered, the step
 * `{"toolCalls": "offered"}`; otherwise an echo of the user's message. Without a scenario it
 * streams at `defaultTokenDelayMs` (15 ms) per token, so that a person sees it stream.
 *
 * Examples:
 * ```text
 * Hi [[scripted {"text": "Hello there!", "tokenDelayMs": 20}]]
 * [[scripted {"steps": [{"toolCalls": [{"name": "calculator", "arguments": {"expression": "2+2"}}]}, {"text": "It is 4."}]}]]
 * x-scripted-scenario: {"attempts": [{"error": {"status": 503, "retryAfterSeconds": 1}}, {"text": "one two", "cutAfterTokens": 1}, {"text": "ok"}]}
 * ```
 */

/**
 * Parses with the schema `choose` picks for the value: where a union would answer only
 * "Invalid input", the author learns what is wrong inside the form they evidently meant.
 */
function routed<S extends z.ZodType>(choose: (value: unknown) => S) {
  return z.unknown().transform((value, ctx): z.output<S> => {
    const parsed = choose(value).safeParse(value);
    if (parsed.success) return parsed.data;
    for (const issue of parsed.error.issues) ctx.addIssue({ code: 'custom', message: issue.message, path: issue.path });
    return z.NEVER;
  });
}

const hasKey = (value: unknown, key: string) => typeof value === 'object' && value !== null && key in value;
const count = z.number().int().min(0);
const milliseconds = z.number().min(0).max(600_000);

const toolCallSpecSchema = z.strictObject({
  name: z.string().min(1),
  /** An object is sent as its JSON; a string verbatim. Default `{}`. */
  arguments: z.union([z.string(), z.record(z.string(), z.unknown())], { error: 'expected an object or a string' }).optional(),
  /** Default `call_<n>`, n counting the calls of this answer from 0. */
  id: z.string().min(1).optional(),
});

const errorSpecSchema = z.strictObject({
  status: z.number().int().min(400).max(599),
  /** Default: a sentence saying the scenario asked for this status. */
  message: z.string().optional(),
  /** Default: the type OpenAI uses for the status (`rate_limit_error`, `server_error`, …). */
  type: z.string().optional(),
  /** Default `null`. */
  code: z.string().optional(),
  /** Sent as `Retry-After`; no header when unset. */
  retryAfterSeconds: z.number().int().min(0).optional(),
});

export const stepSchema = z
  .strictObject({
    /** The answer text, streamed as word-ish tokens. */
    text: z.string().optional(),
    /** N filler tokens instead of `text`; ignored when `text` is given. */
    tokens: count.max(1_000_000).optional(),
    /** Streamed before the text, as `reasoning_content`. */
    reasoning: z.string().optional(),
    /** Pause per token between chunks. Default 0. */
    tokenDelayMs: milliseconds.optional(),
    /** Pause before the first chunk. Default 0. */
    firstTokenDelayMs: milliseconds.optional(),
    /** Text and reasoning tokens per chunk. Default 1. */
    chunkTokens: z.number().int().min(1).optional(),
    /** Calls to make after the text; `"offered"` calls the request's tools with sampled arguments. */
    toolCalls: routed((value) => (typeof value === 'string' ? z.literal('offered') : z.array(toolCallSpecSchema))).optional(),
    /** With `toolCalls: "offered"`: the most calls made. Default 3. */
    maxOfferedCalls: z.number().int().min(1).optional(),
    /** Characters of arguments per fragment. Default 7. */
    argumentChunkChars: z.number().int().min(1).optional(),
    /** Explicit character offsets at which arguments are split; wins over `argumentChunkChars`. */
    splitArgumentsAt: z.array(count).optional(),
    /** Alternate the fragments of parallel calls round-robin. Default false. */
    interleave: z.boolean().optional(),
    /** Where the first fragment of a call starts the arguments. Default `openai`. */
    fragmentStyle: z.enum(['openai', 'vllm', 'split-name']).optional(),
    /** Send calls without any id, as some providers do. Default false. */
    omitIds: z.boolean().optional(),
    /** Answer with this HTTP error instead of a completion. */
    error: errorSpecSchema.optional(),
    /** Drop the connection after N tokens. */
    cutAfterTokens: count.optional(),
    /** Go silent after N tokens (0: after the headers), keeping the connection open. */
    stallAfterTokens: count.optional(),
    /** Send an `error` event after N tokens, then end the stream. */
    errorEventAfterTokens: count.optional(),
    /** End without any `finish_reason`. Default false. */
    omitFinishReason: z.boolean().optional(),
    /** Overrides the finish reason. Default `stop`, or `tool_calls` when the step calls tools. */
    finishReason: z.string().min(1).optional(),
    /** With `response_format`: answer JSON that does not fit the schema (text that is not JSON for `json_object`). */
    invalidOutput: z.boolean().optional(),
  })
  .refine((step) => [step.cutAfterTokens, step.stallAfterTokens, step.errorEventAfterTokens].filter((n) => n !== undefined).length <= 1, {
    error: 'cutAfterTokens, stallAfterTokens and errorEventAfterTokens exclude each other',
  });

const attemptsSchema = z.strictObject({ attempts: z.array(stepSchema).min(1) });

const stepEntrySchema = routed((value) => (hasKey(value, 'attempts') ? attemptsSchema : stepSchema));

export const scenarioSchema = routed((value) =>
  hasKey(value, 'steps') ? z.strictObject({ steps: z.array(stepEntrySchema).min(1) }) : stepEntrySchema.transform((entry) => ({ steps: [entry] })),
);

export type Step = z.output<typeof stepSchema>;
export type StepEntry = z.output<typeof stepEntrySchema>;
/** Always the long form: the shorthand step is its only step. */
export type Scenario = z.output<typeof scenarioSchema>;
export type ErrorSpec = z.output<typeof errorSpecSchema>;

export type ScenarioParse = { ok: true; scenario: Scenario } | { ok: false; message: string };

/** Validates scenario JSON; the message names every problem with its path (`"steps[1].text": …`). */
export function parseScenario(json: unknown): ScenarioParse {
  const parsed = scenarioSchema.safeParse(json);
  if (parsed.success) return { ok: true, scenario: parsed.data };
  return { ok: false, message: describeZodIssues(parsed.error.issues) };
}
