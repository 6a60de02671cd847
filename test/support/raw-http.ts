import net from 'node:net';

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: string;
  socket: net.Socket;
  /** Resolves when the server closed or dropped the connection. */
  closed: Promise<void>;
}

/**
 * An HTTP/1.1 request over a bare TCP socket, for what fetch would not send: a body shorter than
 * its Content-Length (a client that stalls, or lies), left open after what it wrote. Resolves with
 * the first response once it has arrived whole.
 */
export function rawRequest(baseUrl: string, request: { method: string; path: string; headers?: Record<string, string>; body?: string | Buffer }): Promise<RawResponse> {
  return rawExchange(baseUrl, `${request.method} ${request.path} HTTP/1.1`, headerLines(request.headers), request.body);
}

export const headerLines = (headers: Record<string, string> = {}) => Object.entries(headers).map(([name, value]) => `${name}: ${value}`);

/**
 * Writes `requestLine`, Host and `headers` (lines), then `body`, on a new connection to `baseUrl`,
 * and resolves with the first response once it has arrived whole. A 101 is whole at its head:
 * from then on what the server sends is read and ignored, nothing is ever answered.
 */
export function rawExchange(baseUrl: string, requestLine: string, headers: string[], body?: string | Buffer): Promise<RawResponse> {
  const url = new URL(baseUrl);
  const socket = net.connect(Number(url.port), url.hostname);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  socket.write([requestLine, `Host: ${url.host}`, ...headers, '', ''].join('\r\n'));
  if (body !== undefined) socket.write(body);

  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine = '', ...fieldLines] = received.subarray(0, end).toString('latin1').split('\r\n');
      const headers = Object.fromEntries(fieldLines.map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      const status = Number(statusLine.split(' ')[1]);
      const length = status === 101 ? 0 : Number(headers['content-length'] ?? 0);
      if (received.length - end - 4 < length) return;
      socket.off('data', onData);
      socket.on('data', () => undefined);
      resolve({ status, headers, body: received.subarray(end + 4, end + 4 + length).toString('utf8'), socket, closed });
    };
    socket.on('data', onData);
    void closed.then(() => reject(new Error(`the connection closed before a whole response: ${received.toString('latin1')}`)));
  });
}
