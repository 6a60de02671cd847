import { findUnstorableValue } from '../storable/storable-json';
import { describeZodIssues } from '../errors/zod-issues';
import { clientFrameSchemaFor, clientFrameSchemas, type ClientFrame, type ClientFrameType, type FrameErrorCode } from '../events/ws-frames';

export type { ClientFrame, FrameErrorCode, ServerFrame, ToolApprovalFrame, ToolResultFrame } from '../events/ws-frames';

const isFrameType = (type: unknown): type is ClientFrameType => typeof type === 'string' && Object.hasOwn(clientFrameSchemas, type);

// Named from the schemas, so that a new frame type is never left out of the refusal.
const EXPECTED_TYPES = Object.keys(clientFrameSchemas).join(', ');

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
    return { ok: false, code: 'unknown_frame', message: `unknown frame type ${JSON.stringify(type ?? null)}; expected one of ${EXPECTED_TYPES}` };
  }
  const parsed = clientFrameSchemaFor(type, value).safeParse(value);
  if (!parsed.success) {
    return { ok: false, code: 'bad_frame', message: `invalid ${type} frame: ${describeZodIssues(parsed.error.issues)}` };
  }
  // What the database would refuse (a tool answer with a NUL, say) is the client's bad frame.
  const unstorable = findUnstorableValue(parsed.data);
  if (unstorable) return { ok: false, code: 'bad_frame', message: `invalid ${type} frame: ${unstorable.field}: ${unstorable.message}` };
  return { ok: true, frame: parsed.data };
}

/** An event frame around the event's JSON as the log stores it: no parse, no re-encode. */
export function eventFrame(eventJson: string): string {
  return `{"type":"event","event":${eventJson}}`;
}
