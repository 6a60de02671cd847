/**
 * An error answer of the HTTP API (`{error: {code, message, details?}}`), or a failure before any
 * answer (`status` 0): `network_error`, or `no_websocket` (no WebSocket implementation to subscribe with).
 */
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

export interface HttpOptions {
  baseUrl: string;
  token: string;
  fetch?: typeof fetch;
}

/** JSON over `fetch` with a bearer token (an API key or a session token). */
export function httpApi(options: HttpOptions): HttpCall {
  return async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await request(options, method, path, body);
    return (await readJson(response, `${method} ${path}`)) as T;
  };
}

/** A GET whose answer is read as it streams (server-sent events); an error answer throws as {@link httpApi}'s do. */
export async function openStream(options: HttpOptions, path: string): Promise<ReadableStream<Uint8Array>> {
  const response = await request(options, 'GET', path);
  if (!response.ok) await readJson(response, `GET ${path}`);
  if (!response.body) throw new SwitchyardApiError(0, 'network_error', `GET ${path}: the answer has no body`);
  return response.body;
}

async function request(options: HttpOptions, method: string, path: string, body?: unknown): Promise<Response> {
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  try {
    return await fetchImpl(`${options.baseUrl.replace(/\/+$/, '')}${path}`, {
      method,
      headers: { authorization: `Bearer ${options.token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    throw new SwitchyardApiError(0, 'network_error', `${method} ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** The answer's JSON; an error answer throws its `{error}` as a {@link SwitchyardApiError}. */
async function readJson(response: Response, request: string): Promise<unknown> {
  const text = await response.text();
  const value = text ? safeJson(text) : undefined;
  if (!response.ok) {
    const error = (value as { error?: { code?: string; message?: string; details?: unknown } } | undefined)?.error;
    throw new SwitchyardApiError(response.status, error?.code ?? 'http_error', error?.message ?? `${request} answered ${response.status}`, error?.details);
  }
  return value;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
