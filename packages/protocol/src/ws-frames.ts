import * as z from 'zod/mini';
import { approvalDecisionSchema } from './approval-requests.js';
import { eventSchema, usageSchema } from './event.js';
import { clientToolErrorFields, clientToolResultFields } from './turn-requests.js';

/**
 * The websocket gateway's frames (docs/API.md, "Websocket gateway"), both ways: the gateway checks
 * what clients send with these, and the client package checks what the gateway sends with the
 * check generated from them (server-frame-check.generated.ts).
 */
const id = z.string().check(z.minLength(1), z.maxLength(200));

/** What a client may send, by type. */
const subscribeConversation = z.strictObject({ type: z.literal('subscribe'), conversationId: id, after: z.optional(z.int().check(z.nonnegative())) });
const subscribeBatch = z.strictObject({ type: z.literal('subscribe'), batchId: id });
const unsubscribeConversation = z.strictObject({ type: z.literal('unsubscribe'), conversationId: id });
const unsubscribeBatch = z.strictObject({ type: z.literal('unsubscribe'), batchId: id });

export const clientFrameSchemas = {
  subscribe: z.union([subscribeConversation, subscribeBatch]),
  unsubscribe: z.union([unsubscribeConversation, unsubscribeBatch]),
  // A tool's answer and a decision carry what the HTTP routes' bodies do, and the turn they belong to.
  'tool-result': z.union([
    z.strictObject({ type: z.literal('tool-result'), turnId: id, ...clientToolResultFields }),
    z.strictObject({ type: z.literal('tool-result'), turnId: id, ...clientToolErrorFields }),
  ]),
  'tool-approval': z.strictObject({ type: z.literal('tool-approval'), turnId: id, ...approvalDecisionSchema.shape }),
  ping: z.strictObject({ type: z.literal('ping') }),
};
export type ClientFrameType = keyof typeof clientFrameSchemas;

/**
 * The schema a frame of this type is checked with: a (un)subscribe that names a batch is the
 * batch form, any other the conversation form, so that a refusal names the fields of the form
 * the client meant rather than "invalid input".
 */
export function clientFrameSchemaFor(type: ClientFrameType, value: unknown): z.ZodMiniType<ClientFrame> {
  const namesBatch = typeof value === 'object' && value !== null && 'batchId' in value;
  if (type === 'subscribe') return namesBatch ? subscribeBatch : subscribeConversation;
  if (type === 'unsubscribe') return namesBatch ? unsubscribeBatch : unsubscribeConversation;
  return clientFrameSchemas[type] as z.ZodMiniType<ClientFrame>;
}
export type ClientFrame = z.infer<(typeof clientFrameSchemas)[ClientFrameType]>;
export type ToolResultFrame = Extract<ClientFrame, { type: 'tool-result' }>;
export type ToolApprovalFrame = Extract<ClientFrame, { type: 'tool-approval' }>;

export const frameErrorCodes = [
  'bad_frame',
  'unknown_frame',
  'not_found',
  'bad_cursor',
  'cursor_expired',
  'rate_limited',
  'too_many_subscriptions',
  'forbidden',
  'invalid_request',
  'already_decided',
  'internal',
] as const;
export type FrameErrorCode = (typeof frameErrorCodes)[number];

const counts = z.object({
  total: z.int(),
  queued: z.int(),
  running: z.int(),
  waiting: z.int(),
  succeeded: z.int(),
  failed: z.int(),
  cancelled: z.int(),
});

/** What the gateway sends. Error codes are read loosely: a newer server may add some. */
export const serverFrameSchema = z.union([
  z.object({ type: z.literal('subscribed'), conversationId: z.string(), seq: z.int().check(z.nonnegative()) }),
  z.object({ type: z.literal('subscribed'), batchId: z.string() }),
  z.object({ type: z.literal('unsubscribed'), conversationId: z.string() }),
  z.object({ type: z.literal('unsubscribed'), batchId: z.string() }),
  z.object({ type: z.literal('batch-progress'), batchId: z.string(), counts, usage: usageSchema }),
  z.object({ type: z.literal('batch-finish'), batchId: z.string(), status: z.enum(['completed', 'cancelled']), counts }),
  z.object({ type: z.literal('pong') }),
  z.object({ type: z.literal('tool-result-ack'), turnId: z.string(), toolCallId: z.string(), accepted: z.boolean() }),
  /** The stored decision of a call: this frame's, or the one that came first and is the same. */
  z.object({
    type: z.literal('tool-approval-ack'),
    turnId: z.string(),
    toolCallId: z.string(),
    approved: z.boolean(),
    reason: z.nullable(z.string()),
    args: z.unknown(),
    decidedAt: z.string(),
  }),
  z.object({
    type: z.literal('error'),
    code: z.string(),
    message: z.string(),
    conversationId: z.optional(z.string()),
    batchId: z.optional(z.string()),
    oldestSeq: z.optional(z.int()),
    turnId: z.optional(z.string()),
    toolCallId: z.optional(z.string()),
    /** A refused approval's stored decision (`already_decided`), as the REST 409 carries it. */
    details: z.optional(z.unknown()),
  }),
  z.object({ type: z.literal('event'), event: eventSchema }),
]);
export type ReceivedServerFrame = z.infer<typeof serverFrameSchema>;

/** Frames the gateway sends besides events (which it frames once, around the stored JSON). */
export type ServerFrame =
  | Exclude<ReceivedServerFrame, { type: 'error' | 'event' | 'batch-finish' }>
  | { type: 'batch-finish'; batchId: string; status: string; counts: z.infer<typeof counts> }
  | {
      type: 'error';
      code: FrameErrorCode;
      message: string;
      conversationId?: string;
      batchId?: string;
      oldestSeq?: number;
      turnId?: string;
      toolCallId?: string;
      details?: unknown;
    };
