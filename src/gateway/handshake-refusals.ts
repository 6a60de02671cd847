import { TOKEN_EXPIRED } from '../auth/authenticator';
import type { Duplex } from 'node:stream';

/** Why a handshake is refused: its status, its error code and message (the HTTP API's format). */
const REFUSALS = {
  not_found: [404, 'Not Found', 'not_found', 'no websocket endpoint here'],
  origin: [403, 'Forbidden', 'forbidden', 'this Origin may not open websockets here (ALLOWED_ORIGINS)'],
  unauthorized: [401, 'Unauthorized', 'unauthorized', 'a valid API key (Authorization: Bearer) or ticket (?ticket=) is required'],
  token_expired: [401, 'Unauthorized', 'token_expired', TOKEN_EXPIRED],
  failed_auth: [429, 'Too Many Requests', 'rate_limited', 'too many handshakes with a missing or wrong key from this address; wait'],
  user_rate: [429, 'Too Many Requests', 'rate_limited', 'too many requests; slow down'],
  connections_per_key: [429, 'Too Many Requests', 'rate_limited', 'too many open websockets for this API key on this server; close one first'],
  unavailable: [503, 'Service Unavailable', 'unavailable', 'try again shortly'],
} as const;

export type HandshakeRefusal = { reason: keyof typeof REFUSALS; retryAfterSeconds?: number };

/** Answers a handshake with an HTTP error before any upgrade, in the API's error format. */
export function refuseHandshake(socket: Duplex, { reason, retryAfterSeconds }: HandshakeRefusal): void {
  const [status, text, code, message] = REFUSALS[reason];
  const body = JSON.stringify({ error: { code, message } });
  const retryAfter = retryAfterSeconds ?? (status === 503 ? 5 : undefined);
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `${retryAfter === undefined ? '' : `Retry-After: ${retryAfter}\r\n`}Connection: close\r\n\r\n${body}`,
  );
}
