import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { BurstyRateLimiter, RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import WebSocket, { WebSocketServer } from 'ws';
import { ClientSession, CLOSE, type SessionLimits, type SessionServices } from './client-session';
import { eventFrame } from './frames';
import { writesPerTick } from '../subscriptions/writes-per-tick';
import { isOriginAllowed, refusedOriginLog } from '../auth/origin-policy';
import type { OpenConnections } from '../auth/open-connections';
import { admitHandshake, type HandshakeAdmissionDeps } from './handshake-admission';
import { PerKeyCap } from '../limits/per-key-cap';
import { refuseHandshake } from './handshake-refusals';
import type { Metrics } from '../metrics/metrics';

export interface GatewayOptions
  extends
    Omit<SessionServices, 'sendEvent' | 'admitFrame' | 'onSlowConsumer'>,
    Partial<Omit<SessionLimits, 'maxBufferedBytes'>>,
    Omit<HandshakeAdmissionDeps, 'connectionsPerKey'> {
  server: http.Server;
  /** Default `/v1/ws`. */
  path?: string;
  /**
   * Open websockets one API key may hold on this gateway (WS_MAX_CONNECTIONS_PER_KEY); more are
   * refused with 429. Per process on purpose (docs/API.md): the clients of a process that died all
   * reconnect to the others at once, and a count shared in Redis would hold the dead one's until
   * its lease ran out.
   */
  maxConnectionsPerKey: number;
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
  const connectionsPerKey = new PerKeyCap(options.maxConnectionsPerKey);
  const refuseOrigin = refusedOriginLog(options.logger);

  // Every subscriber of a conversation on this gateway gets the same bytes: encode them once.
  let lastJson: string | undefined;
  let lastFrame: Buffer | undefined;
  const services: SessionServices = {
    ownsConversation: options.ownsConversation,
    subscribe: options.subscribe,
    answerToolCall: options.answerToolCall,
    decideApproval: options.decideApproval,
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

  const admission: HandshakeAdmissionDeps = {
    authenticate: options.authenticate,
    authGuard: options.authGuard,
    rateLimiter: options.rateLimiter,
    connectionsPerKey,
  };
  const onUpgrade = (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== path) return refuseHandshake(socket, { reason: 'not_found' });
    const origin = req.headers.origin;
    if (origin !== undefined && !isOriginAllowed(origin, req.headers.host, options.allowedOrigins)) {
      refuseOrigin(origin, req.headers.host, options.allowedOrigins);
      return refuseHandshake(socket, { reason: 'origin' });
    }
    admitHandshake(req, admission).then(
      (admitted) => {
        if (!admitted.ok) return refuseHandshake(socket, admitted.refusal);
        const { principal } = admitted;
        // The key's place is given back when the TCP connection ends, whether the upgrade
        // completed or ws refused it (it then never calls back), or the peer left meanwhile.
        if (socket.destroyed) return admitted.release();
        socket.once('close', admitted.release);
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
        refuseHandshake(socket, { reason: 'unavailable' });
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
      const closed = [...sessions].map(
        (session) =>
          new Promise<void>((resolve) => {
            if (session.socket.readyState === WebSocket.CLOSED) return resolve();
            session.socket.once('close', () => resolve());
            session.close(CLOSE.serviceRestart, reason);
          }),
      );
      await Promise.all(closed);
      await new Promise<void>((resolve) => wss.close(() => resolve()));
    },
  };
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
