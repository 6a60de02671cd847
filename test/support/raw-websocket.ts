import { randomBytes } from 'node:crypto';
import net from 'node:net';

export interface RawHandshake {
  /** The HTTP status the server answered the upgrade request with (101 when it upgraded). */
  status: number;
  headers: Record<string, string>;
  /** The refusal's body (JSON for Switchyard's refusals); '' after a 101. */
  body: string;
  /** The TCP connection: after a 101, a websocket peer that never reads a frame nor answers a ping. */
  socket: net.Socket;
  /** Resolves when the server closed or dropped the connection. */
  closed: Promise<void>;
}

/**
 * A websocket handshake over a bare TCP socket, for what a well-behaved client library would
 * not do: send any Origin, read the exact refusal, or complete the upgrade and then go silent
 * (a peer that vanished without closing).
 */
export function rawHandshake(baseUrl: string, options: { path?: string; headers?: Record<string, string> } = {}): Promise<RawHandshake> {
  const url = new URL(baseUrl);
  const socket = net.connect(Number(url.port), url.hostname);
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  const request = [
    `GET ${options.path ?? '/v1/ws'} HTTP/1.1`,
    `Host: ${url.host}`,
    'Upgrade: websocket',
    'Connection: Upgrade',
    `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
    'Sec-WebSocket-Version: 13',
    ...Object.entries(options.headers ?? {}).map(([name, value]) => `${name}: ${value}`),
    '',
    '',
  ].join('\r\n');
  socket.write(request);

  return new Promise((resolve, reject) => {
    let received = Buffer.alloc(0);
    const onData = (chunk: Buffer) => {
      received = Buffer.concat([received, chunk]);
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return;
      const [statusLine = '', ...headerLines] = received.subarray(0, end).toString('latin1').split('\r\n');
      const headers = Object.fromEntries(
        headerLines.map((line) => [line.slice(0, line.indexOf(':')).trim().toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]),
      );
      const status = Number(statusLine.split(' ')[1]);
      if (status === 101) {
        socket.off('data', onData);
        // Frames (pings included) are read and ignored from here on: nothing is ever answered.
        socket.on('data', () => undefined);
        return resolve({ status, headers, body: '', socket, closed });
      }
      const length = Number(headers['content-length'] ?? 0);
      if (received.length - end - 4 < length) return;
      socket.off('data', onData);
      resolve({ status, headers, body: received.subarray(end + 4, end + 4 + length).toString('utf8'), socket, closed });
    };
    socket.on('data', onData);
    closed.then(() => reject(new Error(`the connection closed during the handshake: ${received.toString('latin1')}`)));
  });
}
