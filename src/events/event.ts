import { z } from 'zod';

/**
 * The one event model of API.md, shared by the worker, the websocket gateway, the SSE
 * route and the replay log. `seq` is assigned by the event log when the event is
 * appended (see event-log/event-log.ts); producers emit an {@link EventBody} without it.
 */

/** How many of something. */
const count = z.number().int().nonnegative();
/** Attempts and steps are numbered from 1. */
const ordinal = z.number().int().positive();

const usage = z.object({ promptTokens: count, completionTokens: count, totalTokens: count });
export type Usage = z.infer<typeof usage>;
export const usageSchema = usage;

const errorValue = z.object({ code: z.string(), message: z.string() }).passthrough();

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
    args: z.unknown().nullable(),
    error: errorValue.optional(),
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
  z.object({ type: z.literal('turn-waiting'), toolCallIds: z.array(z.string()) }),
  z.object({
    type: z.literal('tool-result'),
    toolCallId: z.string(),
    result: z.unknown().optional(),
    error: errorValue.optional(),
    attempts: count,
    durationMs: z.number().nonnegative(),
  }),
  z.object({ type: z.literal('tool_processing_complete'), results: count, failed: count }),
  z.object({ type: z.literal('step-finish'), step: ordinal, finishReason: z.string(), usage }),
  z.object({ type: z.literal('attempt-discarded'), attempt: ordinal, step: ordinal }),
  z.object({ type: z.literal('provider-retry'), attempt: ordinal, retryInMs: z.number().nonnegative(), reason: z.string() }),
  z.object({ type: z.literal('turn-finish'), finishReason: z.string(), usage }),
  z.object({ type: z.literal('turn-error'), error: errorValue }),
  z.object({ type: z.literal('turn-cancelled') }),
] as const;

const envelope = {
  conversationId: z.string(),
  turnId: z.string(),
};

export const eventBodySchema = z.discriminatedUnion(
  'type',
  bodies.map((body) => body.extend(envelope)) as unknown as [typeof bodies[0], ...typeof bodies],
);

export const eventSchema = z.discriminatedUnion(
  'type',
  bodies.map((body) => body.extend({ ...envelope, seq: z.number().int().positive() })) as unknown as [
    typeof bodies[0],
    ...typeof bodies,
  ],
);

type Body = z.infer<(typeof bodies)[number]>;
/** What a producer emits: an event without its `seq`. */
export type EventBody = Body & { conversationId: string; turnId: string };
/** An event as stored in the replay log and delivered to clients. */
export type SwitchyardEvent = EventBody & { seq: number };
export type EventType = EventBody['type'];
/** Distributes over the union so `Omit` keeps each member's own fields. */
export type EventPayload = Body extends infer B ? (B extends unknown ? B : never) : never;

export const TERMINAL_EVENT_TYPES: ReadonlySet<EventType> = new Set(['turn-finish', 'turn-error', 'turn-cancelled']);
