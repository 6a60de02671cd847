import { randomBytes } from 'node:crypto';
import type net from 'node:net';
import { headerLines, rawExchange } from './raw-http';

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
  return rawExchange(baseUrl, `GET ${options.path ?? '/v1/ws'} HTTP/1.1`, [
    'Upgrade: websocket',
    'Connection: Upgrade',
    `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}`,
    'Sec-WebSocket-Version: 13',
    ...headerLines(options.headers),
  ]);
}
