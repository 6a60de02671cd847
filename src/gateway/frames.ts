import { z } from 'zod';
import { findUnstorableValue } from '../store/storable-json';
import { describeZodIssues } from '../errors/zod-issues';

const id = z.string().min(1).max(200);
const toolError = z.object({ code: z.string().min(1).max(100), message: z.string().max(10_000) }).passthrough();

/** What a client may send: JSON text frames of API.md, by type. */
const clientFrameSchemas = {
  subscribe: z.object({ type: z.literal('subscribe'), conversationId: id, after: z.number().int().nonnegative().optional() }).strict(),
  unsubscribe: z.object({ type: z.literal('unsubscribe'), conversationId: id }).strict(),
  'tool-result': z.union([
    z.object({ type: z.literal('tool-result'), turnId: id, toolCallId: id, result: z.unknown() }).strict(),
    z.object({ type: z.literal('tool-result'), turnId: id, toolCallId: id, error: toolError }).strict(),
  ]),
  ping: z.object({ type: z.literal('ping') }).strict(),
};
type FrameType = keyof typeof clientFrameSchemas;
export type ClientFrame = z.infer<(typeof clientFrameSchemas)[FrameType]>;
export type ToolResultFrame = Extract<ClientFrame, { type: 'tool-result' }>;

const isFrameType = (type: unknown): type is FrameType => typeof type === 'string' && Object.hasOwn(clientFrameSchemas, type);

export type FrameErrorCode =
  | 'bad_frame'
  | 'unknown_frame'
  | 'not_found'
  | 'bad_cursor'
  | 'cursor_expired'
  | 'rate_limited'
  | 'too_many_subscriptions'
  | 'internal';

export type ParsedFrame = { ok: true; frame: ClientFrame } | { ok: false; code: FrameErrorCode; message: string };

/** Parses one text frame; a bad frame is a value, never a throw. */
export function parseClientFrame(text: string): ParsedFrame {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, code: 'bad_frame', message: 'frames must be JSON text' };
  }
  const type = (value as { type?: unknown } | null)?.type;
  if (!isFrameType(type)) {
    return { ok: false, code: 'unknown_frame', message: `unknown frame type ${JSON.stringify(type ?? null)}; expected subscribe, unsubscribe, tool-result or ping` };
  }
  const parsed = clientFrameSchemas[type].safeParse(value);
  if (!parsed.success) {
    return { ok: false, code: 'bad_frame', message: `invalid ${type} frame: ${describeZodIssues(parsed.error.issues)}` };
  }
  // What the database would refuse (a tool answer with a NUL, say) is the client's bad frame.
  const unstorable = findUnstorableValue(parsed.data);
  if (unstorable) return { ok: false, code: 'bad_frame', message: `invalid ${type} frame: ${unstorable.field}: ${unstorable.message}` };
  return { ok: true, frame: parsed.data };
}

/** Frames the server sends (besides events, which are framed once in {@link eventFrame}). */
export type ServerFrame =
  | { type: 'subscribed'; conversationId: string; seq: number }
  | { type: 'unsubscribed'; conversationId: string }
  | { type: 'pong' }
  | { type: 'tool-result-ack'; turnId: string; toolCallId: string; accepted: boolean }
  | { type: 'error'; code: FrameErrorCode; message: string; conversationId?: string; oldestSeq?: number };

/** An event frame around the event's JSON as the log stores it: no parse, no re-encode. */
export function eventFrame(eventJson: string): string {
  return `{"type":"event","event":${eventJson}}`;
}
