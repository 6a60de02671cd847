import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import WebSocket, { WebSocketServer } from 'ws';
import { ClientSession, CLOSE, type SessionLimits, type SessionServices } from './client-session';
import { eventFrame } from './frames';
import { writesPerTick } from '../runtime/writes-per-tick';
import { isOriginAllowed } from '../auth/origin-policy';
import type { Principal } from '../auth/principal';
import type { AuthGuard } from '../api/require-user';
import type { OpenConnections } from '../auth/open-connections';
import type { Metrics } from '../metrics/metrics';

export interface GatewayOptions extends Omit<SessionServices, 'sendEvent' | 'admitFrame' | 'onSlowConsumer'>, Partial<Omit<SessionLimits, 'maxBufferedBytes'>> {
  server: http.Server;
  /** Default `/v1/ws`. */
  path?: string;
  /** Who a handshake is (`Authorization: Bearer` or `?ticket=`), or null to refuse it with 401. */
  authenticate(req: http.IncomingMessage): Promise<Principal | null>;
  /** Handshakes with bad credentials, counted per client address as the HTTP API counts them. */
  authGuard: AuthGuard;
  /** Where each connection is registered under its key, so that revoking the key closes it. */
  connections: OpenConnections;
  allowedOrigins: readonly string[];
  /** A larger frame closes the connection with 1009. */
  maxFrameBytes: number;
  maxBufferedBytes: number;
  /** Frames a connection may send per second, sustained (default 50), and at once (default 100). */
  framesPerSecond?: number;
  frameBurst?: number;
  /** Ping interval; a peer that misses one pong is dropped. */
  heartbeatMs: number;
  logger: Logger;
  metrics: Pick<Metrics, 'eventRelayLag' | 'slowConsumerDisconnects'>;
}

export interface Gateway {
  clientCount(): number;
  /** Subscriptions of the open connections: to conversations, and to batches. */
  subscriptionCounts(): { conversation: number; batch: number };
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
  };
  const admitFrame = frameAdmission(options.framesPerSecond ?? 50, options.frameBurst ?? 100);

  // Every subscriber of a conversation on this gateway gets the same bytes: encode them once.
  let lastJson: string | undefined;
  let lastFrame: Buffer | undefined;
  const services: SessionServices = {
    ownsConversation: options.ownsConversation,
    subscribe: options.subscribe,
    answerToolCall: options.answerToolCall,
    ownsBatch: options.ownsBatch,
    followBatch: options.followBatch,
    admitFrame,
    logger: options.logger,
    sendEvent(socket, json, appendedAt) {
      if (json !== lastJson) {
        lastJson = json;
        lastFrame = Buffer.from(eventFrame(json));
        // Once per event on this gateway, when it first goes out, not once per subscriber.
        if (appendedAt !== undefined) options.metrics.eventRelayLag.observe(Math.max(0, Date.now() - appendedAt) / 1000);
      }
      socket.send(lastFrame!, { binary: false });
    },
    onSlowConsumer: () => options.metrics.slowConsumerDisconnects.inc({ transport: 'websocket' }),
  };

  const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== path) return refuse(socket, 404);
    if (!isOriginAllowed(req.headers.origin, req.headers.host, options.allowedOrigins)) return refuse(socket, 403);
    const address = options.authGuard.addressOf(req);
    /** The handshake's principal, or the status it is refused with. */
    const admit = async (): Promise<Principal | 401 | 429> => {
      if ((await options.authGuard.failures.waitSeconds(address)) > 0) return 429;
      const principal = await options.authenticate(req);
      if (principal) return principal;
      await options.authGuard.failures.failed(address);
      return 401;
    };
    admit().then(
      (principal) => {
        if (typeof principal === 'number') return refuse(socket, principal);
        wss.handleUpgrade(req, socket, head, (ws) => {
          // The socket ws writes to: the session holds its writes to the end of each tick.
          const session = new ClientSession(ws, principal, services, limits, writesPerTick(socket));
          sessions.add(session);
          const unregister = options.connections.add(principal.keyId, (reason) => session.close(CLOSE.policyViolation, reason));
          ws.once('close', () => {
            sessions.delete(session);
            unregister();
          });
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
    subscriptionCounts() {
      const counts = { conversation: 0, batch: 0 };
      for (const session of sessions) {
        counts.conversation += session.subscriptionCount;
        counts.batch += session.batchSubscriptionCount;
      }
      return counts;
    },
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
  429: ['Too Many Requests', 'rate_limited', 'too many handshakes with a missing or wrong key from this address; wait'],
  503: ['Service Unavailable', 'unavailable', 'try again shortly'],
} as const;

/** Answers a handshake with an HTTP error before any upgrade, in the API's error format. */
function refuse(socket: Duplex, status: keyof typeof REFUSALS): void {
  const [text, code, message] = REFUSALS[status];
  const body = JSON.stringify({ error: { code, message } });
  const retryAfter = status === 503 ? 'Retry-After: 5\r\n' : status === 429 ? 'Retry-After: 60\r\n' : '';
  socket.end(
    `HTTP/1.1 ${status} ${text}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n${retryAfter}Connection: close\r\n\r\n${body}`,
  );
}

/**
 * Each connection may send `perSecond` frames a second, counted in tenths of a second, and
 * `burst` more over a window of `burst / perSecond` seconds: a token bucket's sustained rate
 * and burst, in rate-limiter-flexible's terms. Counted in this process (a connection lives in one).
 */
function frameAdmission(perSecond: number, burst: number): (session: ClientSession) => Promise<boolean> {
  const limiter = new BurstyRateLimiter(
    new RateLimiterMemory({ points: Math.max(1, Math.round(perSecond / 10)), duration: 0.1 }),
    new RateLimiterMemory({ keyPrefix: 'burst', points: burst, duration: Math.max(1, burst / perSecond) }),
  );
  const keys = new WeakMap<ClientSession, string>();
  let next = 0;
  return (session) => {
    let key = keys.get(session);
    if (key === undefined) keys.set(session, (key = String(next++)));
    return limiter.consume(key).then(
      () => true,
      (rejection: unknown) => {
        if (rejection instanceof RateLimiterRes) return false;
        throw rejection;
      },
    );
  };
}
