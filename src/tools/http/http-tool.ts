import type { ExecutableTool } from '../executable-tool';
import type { ToolOutcome } from '../tool';
import { errorMessage } from '../../errors/switchyard-error';
import { declaredTool } from './declared-tool';
import { DEFAULT_MAX_RESPONSE_BYTES, outcomeOfResponse, readLimitedText } from './http-response';
import type { HttpToolDefinition } from './parse-tool-file';
import { withoutUrlCredentials } from '../url-credentials';

export interface HttpToolOptions {
  /** Default 1 MiB; a larger 2xx body is the error `response_too_large`. */
  maxResponseBytes?: number;
  /** Default the global `fetch`; injectable for tests. */
  fetch?: typeof fetch;
}

/** Methods whose arguments travel in the query string rather than a body. */
const QUERY_METHODS = new Set(['GET', 'DELETE']);

/**
 * An `http` tool: one request per attempt. The `Idempotency-Key` is `<turnId>:<toolCallId>`,
 * the same on every retry of a call (also after a worker crash), so that the service behind it
 * can apply a side effect once.
 */
export function createHttpTool(definition: HttpToolDefinition, options: HttpToolOptions = {}): ExecutableTool {
  const maxBytes = options.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const doFetch = options.fetch ?? fetch;
  return {
    ...declaredTool(definition, definition.retries),
    async execute(args, ctx): Promise<ToolOutcome> {
      const url = new URL(definition.url);
      const sendsQuery = QUERY_METHODS.has(definition.method);
      if (sendsQuery) appendQuery(url, args as Record<string, unknown>);
      // Configured headers first: the idempotency key and content type are ours to set.
      const headers: Record<string, string> = {
        ...definition.headers,
        'Idempotency-Key': `${ctx.turnId}:${ctx.toolCallId}`,
        Accept: 'application/json, text/plain;q=0.9, */*;q=0.5',
        ...(sendsQuery ? {} : { 'Content-Type': 'application/json' }),
      };
      let response: Response;
      try {
        response = await doFetch(url, {
          method: definition.method,
          headers,
          ...(sendsQuery ? {} : { body: JSON.stringify(args) }),
          // Not followed: a redirect to another host would carry the configured headers
          // (API keys) with it. A 3xx is reported as an http_error naming the new location.
          redirect: 'manual',
          signal: ctx.signal,
        });
        return outcomeOfResponse(response, await readLimitedText(response, maxBytes), maxBytes);
      } catch (error) {
        // The registry reports a timeout or a cancellation itself when the signal caused this.
        return { ok: false, error: { code: 'network_error', message: describeFetchError(error), retryable: true } };
      }
    },
  };
}

/**
 * Arguments as query parameters: strings, numbers and booleans as themselves, objects and arrays
 * JSON-encoded (a query string has no structure of its own), null and undefined left out.
 * Parameters already in the configured URL are kept.
 */
export function appendQuery(url: URL, args: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(args)) {
    if (value === undefined || value === null) continue;
    url.searchParams.append(key, typeof value === 'object' ? JSON.stringify(value) : String(value));
  }
}

/**
 * undici's "fetch failed" says nothing; its cause says what happened (ECONNREFUSED, ENOTFOUND).
 * Either may quote the URL: never with its credentials.
 */
function describeFetchError(error: unknown): string {
  const cause = typeof error === 'object' && error !== null ? (error as { cause?: unknown }).cause : undefined;
  return withoutUrlCredentials(cause === undefined ? errorMessage(error) : `${errorMessage(error)}: ${errorMessage(cause)}`);
}
