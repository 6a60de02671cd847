import type { ResponseStreamEvent } from './response-stream-mapper';

/**
 * A Responses stream's `error` event. OpenAI's reference puts `code`, `message` and `param` at
 * the root of the event, while its API sends them under `error`, which is what its SDKs throw
 * on (`APIError`): both are given, so that a reader of either kind learns why the stream ended.
 */
export function responseStreamError(error: { code: string; message: string; param: string | null }, sequenceNumber: number): ResponseStreamEvent {
  return { type: 'error', ...error, error: { type: 'invalid_request_error', ...error }, sequence_number: sequenceNumber };
}
