import { types } from 'node:util';
import { describeConnectionFailure, redactUrl } from '../errors/connection-failure';
import { SwitchyardError } from '../errors/switchyard-error';

/**
 * The API did not answer at all (nothing listens there, no such host, a timeout): the message
 * names the URL and the cause (`ECONNREFUSED`), since a wrong `--url` is the usual reason.
 */
export class ApiUnreachableError extends SwitchyardError<'api_unreachable'> {
  readonly code = 'api_unreachable';

  constructor(
    readonly baseUrl: string,
    cause: unknown,
  ) {
    super(describeUnreachable(baseUrl, cause), { cause });
    this.name = 'ApiUnreachableError';
  }
}

export function describeUnreachable(baseUrl: string, thrown: unknown): string {
  const code = errorCode(thrown);
  const { reason } = describeConnectionFailure(thrown);
  // As typed (no trailing slash added), unless it holds a password.
  const shown = /\/\/[^/]*@/.test(baseUrl) ? redactUrl(baseUrl) : baseUrl;
  return `cannot reach the Switchyard API at ${shown} (--url): ${code ? `${code}, ` : ''}${reason}`;
}

/** `fetch`, whose network failures reject with an {@link ApiUnreachableError} naming `baseUrl`. */
export function fetchReaching(baseUrl: string, fetchImpl: typeof fetch = globalThis.fetch.bind(globalThis)): typeof fetch {
  return async (input, init) => {
    try {
      return await fetchImpl(input, init);
    } catch (error) {
      // An abort is the caller's own doing (Ctrl-C), not the API's.
      if (init?.signal?.aborted) throw error;
      throw new ApiUnreachableError(baseUrl, error);
    }
  };
}

/** The errno-style code (`ECONNREFUSED`, `ENOTFOUND`) under fetch's "fetch failed", if any. */
function errorCode(thrown: unknown): string | undefined {
  for (let error = thrown, depth = 0; error && depth < 5; depth++) {
    if (!(error instanceof Error || types.isNativeError(error))) return undefined;
    const { code, errors, cause } = error as Error & { code?: unknown; errors?: unknown[]; cause?: unknown };
    if (typeof code === 'string' && /^E[A-Z_]+$/.test(code)) return code;
    error = Array.isArray(errors) && errors.length > 0 ? errors[0] : cause;
  }
  return undefined;
}
