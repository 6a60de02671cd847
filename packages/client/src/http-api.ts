/** An error answer of the HTTP API (`{error: {code, message, details?}}`), or a network failure (`status` 0). */
export class SwitchyardApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'SwitchyardApiError';
  }
}

export type HttpCall = <T>(method: string, path: string, body?: unknown) => Promise<T>;

/** JSON over `fetch` with a bearer token (an API key or a session token). */
export function httpApi(options: { baseUrl: string; token: string; fetch?: typeof fetch }): HttpCall {
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  return async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    let response: Response;
    try {
      response = await fetchImpl(`${baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${options.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch (error) {
      throw new SwitchyardApiError(0, 'network_error', `${method} ${path}: ${error instanceof Error ? error.message : String(error)}`);
    }
    const text = await response.text();
    const value = text ? safeJson(text) : undefined;
    if (!response.ok) {
      const error = (value as { error?: { code?: string; message?: string; details?: unknown } } | undefined)?.error;
      throw new SwitchyardApiError(response.status, error?.code ?? 'http_error', error?.message ?? `${method} ${path} answered ${response.status}`, error?.details);
    }
    return value as T;
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
