import type { ToolOutcome } from '../tool';
import { withoutUrlCredentials } from '../url-credentials';

/** Default cap on a response body: a tool result goes back into the model's context. */
export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
/** How much of an error body the model and the logs see. */
const ERROR_MESSAGE_CHARS = 500;

/**
 * Reads at most `maxBytes` of the body; past that it stops reading (and cancels the stream, so a
 * huge or endless body costs no more than the cap) and reports `truncated`.
 */
export async function readLimitedText(response: Response, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
  if (!response.body) return { text: '', truncated: false };
  const reader = response.body.getReader();
  const decoder = new TextDecoder();
  let received = 0;
  let text = '';
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return { text: text + decoder.decode(), truncated: false };
      if (received + value.byteLength > maxBytes) {
        return { text: text + decoder.decode(value.subarray(0, maxBytes - received)), truncated: true };
      }
      received += value.byteLength;
      text += decoder.decode(value, { stream: true });
    }
  } finally {
    reader.cancel().catch(() => undefined);
  }
}

/** 408, 429 and 5xx may pass on another try; any other status will not. */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

/**
 * The outcome of a finished response: a 2xx body as parsed JSON (when it says it is JSON, or
 * says nothing and parses) or as text; anything else an `http_error`.
 */
export function outcomeOfResponse(response: { status: number; statusText: string; headers: Headers }, body: { text: string; truncated: boolean }, maxBytes: number): ToolOutcome {
  if (response.status >= 300 && response.status <= 399) {
    const location = response.headers.get('location');
    const where = location ? ` to ${withoutUrlCredentials(location)}` : '';
    return httpError(response.status, `redirected${where}; redirects are not followed, configure the final URL`, false);
  }
  if (response.status < 200 || response.status > 299) {
    const message = body.text.slice(0, ERROR_MESSAGE_CHARS) || `HTTP ${response.status} ${response.statusText}`.trim();
    return httpError(response.status, message, isRetryableStatus(response.status), response.headers.get('retry-after'));
  }
  if (body.truncated) {
    return { ok: false, error: { code: 'response_too_large', message: `the response body is larger than ${maxBytes} bytes`, retryable: false } };
  }
  if (body.text === '') return { ok: true, result: null };
  const contentType = response.headers.get('content-type') ?? '';
  const saysJson = /[/+]json\b/i.test(contentType);
  if (saysJson || contentType === '') {
    try {
      return { ok: true, result: JSON.parse(body.text) };
    } catch {
      // A body labelled JSON that is not: the text is still the best answer we have.
    }
  }
  return { ok: true, result: body.text };
}

/** A response that is not a 2xx: `retryAfter` as the service sent it, when it did. */
function httpError(status: number, message: string, retryable: boolean, retryAfter?: string | null): ToolOutcome {
  return { ok: false, error: { code: 'http_error', status, message, retryable, ...(retryAfter ? { retryAfter } : {}) } };
}
