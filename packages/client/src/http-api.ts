/**
 * An error answer of the HTTP API (`{error: {code, message, details?}}`), or a failure before any
 * answer (`status` 0): `network_error`, `token_unavailable` (the token provider failed), or
 * `no_websocket` (no WebSocket implementation to subscribe with).
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

/**
 * Gives a bearer token: typically asks the page's own backend for a session token (which mints
 * it with the API key). Called for the first request, and again each time the server answers 401
 * `token_expired`; concurrent requests that meet the expiry share one call.
 */
export type TokenProvider = () => string | Promise<string>;

export interface HttpOptions {
  baseUrl: string;
  /** An API key or a session token, or a {@link TokenProvider} that is asked again when the token expires. */
  token: string | TokenProvider;
  fetch?: typeof fetch;
}

/** Where requests go and with what token: made once per client, so that its requests share their token. */
export interface HttpConnection {
  baseUrl: string;
  fetch?: typeof fetch;
  tokens: TokenSource;
}

/** The token to send, and a new one once the server said it expired (null: a fixed token cannot be renewed). */
export interface TokenSource {
  current(): Promise<string>;
  renew: ((expired: string) => Promise<string>) | null;
}

export function httpConnection(options: HttpOptions): HttpConnection {
  return { baseUrl: options.baseUrl, ...(options.fetch ? { fetch: options.fetch } : {}), tokens: tokenSource(options.token) };
}

/** A fixed token as it is; a provider's token kept until the server says it expired. */
export function tokenSource(token: string | TokenProvider): TokenSource {
  if (typeof token === 'string') return { current: () => Promise.resolve(token), renew: null };
  let known: string | undefined;
  let asking: Promise<string> | undefined;
  const ask = () => {
    asking ??= (async () => {
      try {
        known = await token();
        return known;
      } catch (error) {
        throw new SwitchyardApiError(0, 'token_unavailable', `the token provider failed: ${error instanceof Error ? error.message : String(error)}`);
      } finally {
        asking = undefined;
      }
    })();
    return asking;
  };
  return {
    current: () => (known !== undefined ? Promise.resolve(known) : ask()),
    // Another request may have renewed it meanwhile: that token is used, not a third.
    renew: (expired) => asking ?? (known !== undefined && known !== expired ? Promise.resolve(known) : ask()),
  };
}

/** JSON over `fetch` with a bearer token (an API key or a session token, fixed or from a provider). */
export function httpApi(options: HttpOptions): HttpCall {
  return httpCall(httpConnection(options));
}

/** {@link httpApi} on a connection its caller shares with other requests. */
export function httpCall(connection: HttpConnection): HttpCall {
  return async <T>(method: string, path: string, body?: unknown): Promise<T> => {
    const response = await request(connection, method, path, body);
    return (await readJson(response, `${method} ${path}`)) as T;
  };
}

/** A GET whose answer is read as it streams (server-sent events); an error answer throws as {@link httpApi}'s do. */
export async function openStream(connection: HttpConnection, path: string): Promise<ReadableStream<Uint8Array>> {
  const response = await request(connection, 'GET', path);
  if (!response.ok) await readJson(response, `GET ${path}`);
  if (!response.body) throw new SwitchyardApiError(0, 'network_error', `GET ${path}: the answer has no body`);
  return response.body;
}

/** Sends the request; a provider's token that the server says expired is renewed, and the request sent once more with the new one. */
async function request(connection: HttpConnection, method: string, path: string, body?: unknown): Promise<Response> {
  const token = await connection.tokens.current();
  const response = await send(connection, token, method, path, body);
  if (response.status !== 401 || !connection.tokens.renew || (await errorCodeOf(response.clone())) !== 'token_expired') return response;
  void response.body?.cancel().catch(() => undefined);
  return send(connection, await connection.tokens.renew(token), method, path, body);
}

async function send(connection: HttpConnection, token: string, method: string, path: string, body?: unknown): Promise<Response> {
  const fetchImpl = connection.fetch ?? globalThis.fetch.bind(globalThis);
  try {
    return await fetchImpl(`${connection.baseUrl.replace(/\/+$/, '')}${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch (error) {
    throw new SwitchyardApiError(0, 'network_error', `${method} ${path}: ${error instanceof Error ? error.message : String(error)}`);
  }
}

async function errorCodeOf(response: Response): Promise<string | undefined> {
  const value = safeJson(await response.text().catch(() => ''));
  return (value as { error?: { code?: string } } | undefined)?.error?.code;
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
