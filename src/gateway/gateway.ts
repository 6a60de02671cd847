import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import WebSocket, { WebSocketServer } from 'ws';
import { ClientSession, CLOSE, type SessionLimits, type SessionServices } from './client-session';
import { eventFrame } from './frames';
import { isOriginAllowed } from './origin-policy';

export interface GatewayOptions extends Omit<SessionServices, 'sendEvent'>, Partial<Omit<SessionLimits, 'maxBufferedBytes'>> {
  server: http.Server;
  /** Default `/v1/ws`. */
  path?: string;
  /** The user of a handshake (`Authorization: Bearer` or `?ticket=`), or null to refuse it with 401. */
  authenticate(req: http.IncomingMessage): Promise<string | null>;
  allowedOrigins: readonly string[];
  /** A larger frame closes the connection with 1009. */
  maxFrameBytes: number;
  maxBufferedBytes: number;
  /** Ping interval; a peer that misses one pong is dropped. */
  heartbeatMs: number;
  logger: Logger;
}

export interface Gateway {
  clientCount(): number;
  /** Closes every connection with 1012 (a reconnect hint) and stops accepting new ones. */
  close(reason: string): Promise<void>;
}

/** The websocket gateway on the API's HTTP server: authenticated before the upgrade. */
export function createGateway(options: GatewayOptions): Gateway {
  const path = options.path ?? '/v1/ws';
  const wss = new WebSocketServer({ noServer: true, maxPayload: options.maxFrameBytes, perMessageDeflate: false });
  const sessions = new Set<ClientSession>();
  const limits: SessionLimits = {
    maxBufferedBytes: options.maxBufferedBytes,
    maxSubscriptions: options.maxSubscriptions ?? 100,
    framesPerSecond: options.framesPerSecond ?? 50,
    frameBurst: options.frameBurst ?? 100,
  };

  // Every subscriber of a conversation on this gateway gets the same bytes: encode them once.
  let lastJson: string | undefined;
  let lastFrame: Buffer | undefined;
  const services: SessionServices = {
    ownsConversation: options.ownsConversation,
    subscribe: options.subscribe,
    answerToolCall: options.answerToolCall,
    logger: options.logger,
    sendEvent(socket, json) {
      if (json !== lastJson) {
        lastJson = json;
        lastFrame = Buffer.from(eventFrame(json));
      }
      socket.send(lastFrame!, { binary: false });
    },
  };

  const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== path) return refuse(socket, 404);
    if (!isOriginAllowed(req.headers.origin, req.headers.host, options.allowedOrigins)) return refuse(socket, 403);
    options.authenticate(req).then(
      (userId) => {
        if (!userId) return refuse(socket, 401);
        wss.handleUpgrade(req, socket, head, (ws) => {
          const session = new ClientSession(ws, userId, services, limits);
          sessions.add(session);
          ws.once('close', () => sessions.delete(session));
        });
      },
      (error: unknown) => {
        options.logger.warn({ err: error }, 'websocket handshake failed');
        refuse(socket, 503);
      },
    );
  };
  options.server.on('upgrade', onUpgrade);

  const heartbeat = setInterval(() => {
    for (const session of sessions) {
      if (!session.alive) {
        session.socket.terminate();
        continue;
      }
      session.alive = false;
      session.socket.ping();
    }
  }, options.heartbeatMs);
  heartbeat.unref();

  return {
    clientCount: () => sessions.size,
    async close(reason) {
      clearInterval(heartbeat);
      options.server.off('upgrade', onUpgrade);
      const closed = [...sessions].map((session) => new Promise<void>((resolve) => {
        if (session.socket.readyState === WebSocket.CLOSED) return resolve();
        session.socket.once('close', () => resolve());
        session.close(CLOSE.serviceRestart, reason);
      }));
      await Promise.all(closed);
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
}

const REFUSALS = {
  401: ['Unauthorized', 'unauthorized', 'a valid API key (Authorization: Bearer) or ticket (?ticket=) is required'],
  403: ['Forbidden', 'forbidden', 'this Origin may not open websockets here (ALLOWED_ORIGINS)'],
  404: ['Not Found', 'not_found', 'no websocket endpoint here'],
  503: ['Service Unavailable', 'unavailable', 'try again shortly'],
} as const;

/** Answers a handshake with an HTTP error before any upgrade, in the API's error format. */
function refuse(socket: Duplex, status: keyof typeof REFUSALS): void {
  const [text, code, message] = REFUSALS[status];
  const body = JSON.stringify({ error: { code, message } });
  const retryAfter = status === 503 ? 'Retry-After: 5\r\n' : '';
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${retryAfter}Connection: close\r\n\r\n${body}`,
  );
}
