import { poll } from './poll';
import http from 'node:http';
/** A small JSON client for tests: real HTTP, status and body returned, never thrown. */
export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export function apiClient(baseUrl: string, apiKey?: string) {
  async function request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
    const response = await fetch(`${baseUrl}${path}`, {
      method,
      headers: {
        ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON: keep the text
    }
    return { status: response.status, body: parsed as T, headers: response.headers };
  }
  return {
    request,
    get: <T = any>(path: string) => request<T>('GET', path),
    post: <T = any>(path: string, body?: unknown, headers?: Record<string, string>) => request<T>('POST', path, body ?? {}, headers),
    put: <T = any>(path: string, body: unknown) => request<T>('PUT', path, body),
    patch: <T = any>(path: string, body: unknown) => request<T>('PATCH', path, body),
    delete: <T = any>(path: string) => request<T>('DELETE', path),
  };
}

export interface OpenUpload {
  /** Sends more of the body. */
  write(text: string | Buffer): void;
  /** Ends the body. */
  end(text?: string): void;
  /** Goes away mid-body, as a client that gives up does (`response` then rejects). */
  abandon(): void;
  /** The answer, as soon as the server sends it (also before the body ended). */
  response: Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: any }>;
}

/**
 * A POST whose body is sent piece by piece (chunked, unless `headers` give its Content-Length)
 * while the test holds it open: a slow upload. The response resolves whenever the server
 * answers, body ended or not.
 */
export function openUpload(baseUrl: string, path: string, headers: Record<string, string>): OpenUpload {
  const request = http.request(`${baseUrl}${path}`, { method: 'POST', headers });
  const response = new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: any }>((resolve, reject) => {
    request.once('error', reject);
    request.once('response', (incoming) => {
      let text = '';
      incoming.setEncoding('utf8');
      incoming.on('data', (piece: string) => (text += piece));
      incoming.once('end', () => {
        let body: unknown = text;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          // not JSON: keep the text
        }
        resolve({ status: incoming.statusCode ?? 0, headers: incoming.headers, body });
      });
    });
  });
  request.flushHeaders();
  return {
    write: (text) => void request.write(text),
    end: (text) => void request.end(text),
    abandon: () => void request.destroy(),
    response,
  };
}

/** One sample of a Prometheus metric on `/metrics` (no labels), or null while it has none. */
export async function readMetric(baseUrl: string, name: string): Promise<number | null> {
  const page = await (await fetch(`${baseUrl}/metrics`)).text();
  const line = page.split('\n').find((each) => each.startsWith(`${name} `));
  return line === undefined ? null : Number(line.slice(name.length + 1));
}

/** Waits until the metric reads `value` (asked again each 20 ms, for up to `timeoutMs`). */
export async function waitForMetric(baseUrl: string, name: string, value: number, timeoutMs = 10_000): Promise<void> {
  let last: number | null = null;
  await poll(
    () => `${name} stayed ${last}, not ${value}`,
    async () => (last = await readMetric(baseUrl, name)) === value,
    timeoutMs,
    20,
  );
}
