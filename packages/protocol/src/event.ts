import * as z from 'zod/mini';

/**
 * The one event model of API.md, shared by the worker, the websocket gateway, the SSE
 * route, the replay log and the clients. `seq` is assigned by the event log when the event is
 * appended; producers emit an {@link EventBody} without it. Written with zod/mini: the same
 * schemas as zod's classic API (and as convertible with `z.toJSONSchema`), but a browser
 * bundle takes only the checks it uses (a few KB instead of zod's 450).
 */

/** How many of something. */
const count = z.int().check(z.nonnegative());
/** Attempts and steps are numbered from 1. */
const ordinal = z.int().check(z.positive());

const usage = z.object({ promptTokens: count, completionTokens: count, totalTokens: count });
export type Usage = z.infer<typeof usage>;
export const usageSchema = usage;

const errorValue = z.looseObject({ code: z.string(), message: z.string() });

/** A model's target: a provider, and the model's name there. */
const target = z.object({ provider: z.string(), model: z.string() });

const bodies = [
  z.object({ type: z.literal('turn-start'), attempt: ordinal }),
  z.object({ type: z.literal('step-start'), step: ordinal }),
  z.object({ type: z.literal('text-delta'), delta: z.string() }),
  z.object({ type: z.literal('reasoning-delta'), delta: z.string() }),
  z.object({ type: z.literal('tool-call-start'), toolCallId: z.string(), toolName: z.string() }),
  z.object({ type: z.literal('tool-call-delta'), toolCallId: z.string(), argsTextDelta: z.string() }),
  z.object({
    type: z.literal('tool-call-end'),
    toolCallId: z.string(),
    args: z.nullable(z.unknown()),
    error: z.optional(errorValue),
  }),
  z.object({
    type: z.literal('tool_processing_start'),
    toolCalls: z.array(z.object({ toolCallId: z.string(), toolName: z.string(), args: z.unknown() })),
  }),
  z.object({
    type: z.literal('tool-call-request'),
    toolCallId: z.string(),
    toolName: z.string(),
    args: z.unknown(),
  }),
  z.object({
    type: z.literal('tool-approval-request'),
    toolCallId: z.string(),
    toolName: z.string(),
    args: z.unknown(),
    approvalId: z.string(),
    expiresAt: z.string(),
  }),
  z.object({ type: z.literal('tool-approval-response'), toolCallId: z.string(), approved: z.boolean(), reason: z.optional(z.string()) }),
  z.object({ type: z.literal('turn-waiting'), toolCallIds: z.array(z.string()) }),
  z.object({
    type: z.literal('tool-result'),
    toolCallId: z.string(),
    result: z.optional(z.unknown()),
    error: z.optional(errorValue),
    attempts: count,
    durationMs: z.number().check(z.nonnegative()),
  }),
  z.object({ type: z.literal('tool_processing_complete'), results: count, failed: count }),
  z.object({ type: z.literal('step-finish'), step: ordinal, finishReason: z.string(), usage }),
  z.object({ type: z.literal('attempt-discarded'), attempt: ordinal, step: ordinal }),
  z.object({ type: z.literal('provider-retry'), attempt: ordinal, retryInMs: z.number().check(z.nonnegative()), reason: z.string() }),
  z.object({
    type: z.literal('provider-fallback'),
    step: ordinal,
    from: target,
    to: target,
    /** What the `from` target did: rate_limited, server, connection, idle_timeout, truncated, stream_error or context_length_exceeded. */
    reason: z.string(),
  }),
  z.object({ type: z.literal('compaction-start'), compactionId: z.string() }),
  z.object({ type: z.literal('compaction-finish'), compactionId: z.string(), tokensBefore: count, tokensAfter: count }),
  z.object({ type: z.literal('turn-finish'), finishReason: z.string(), usage }),
  z.object({ type: z.literal('turn-error'), error: errorValue }),
  z.object({ type: z.literal('turn-cancelled') }),
] as const;

type Bodies = typeof bodies;

const envelope = {
  conversationId: z.string(),
  turnId: z.string(),
};

export const eventSchema = z.discriminatedUnion('type', bodies.map((body) => z.extend(body, { ...envelope, seq: ordinal })) as unknown as [Bodies[0], ...Bodies]);

type Body = z.infer<Bodies[number]>;
/** What a producer emits: an event without its `seq`. */
export type EventBody = Body & { conversationId: string; turnId: string };
/** An event as stored in the replay log and delivered to clients. */
export type SwitchyardEvent = EventBody & { seq: number };
export type EventType = EventBody['type'];
/** Distributes over the union so `Omit` keeps each member's own fields. */
export type EventPayload = Body extends infer B ? (B extends unknown ? B : never) : never;
