import cors from 'cors';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { isOriginAllowed, refusedOriginLog } from '../auth/origin-policy';
import { AppError } from '../errors/app-error';

/**
 * CORS for browser apps on other origins, decided as the websocket's Origin check is (ALLOWED_ORIGINS;
 * with none, only the API's own origin), on every route under it. Every route, not only those a
 * session token may use: a page whose token a route refuses must be able to read that 403 (it
 * names what the route needs), where a refused preflight shows it only an opaque "Failed to
 * fetch". What a request may do is its credentials' business, checked after this.
 * Mounted before any credentials check: a preflight carries none, so it is answered here, and never
 * counts as a failed login. A preflight from an origin not allowed is answered 403 with what to set
 * (also logged once per origin), where a bare 401 would leave a developer guessing. A real request
 * from an origin not allowed goes on without CORS headers, so the browser keeps its answer from the page.
 */
export function crossOrigin(options: { allowedOrigins: readonly string[]; logger: Logger }): RequestHandler {
  const { allowedOrigins } = options;
  const refuseOrigin = refusedOriginLog(options.logger);

  return (req, res, next) => {
    const origin = req.headers.origin;
    const isPreflight = req.method === 'OPTIONS' && origin !== undefined && req.headers['access-control-request-method'] !== undefined;
    res.vary('Origin');
    if (!isOriginAllowed(origin, req.headers.host, allowedOrigins)) {
      if (!isPreflight) return next();
      const reason = refuseOrigin(origin, req.headers.host, allowedOrigins);
      throw new AppError('forbidden', reason, { origin, setting: 'ALLOWED_ORIGINS' });
    }
    return answerCors(req, res, next);
  };
}

/** The CORS answer for an allowed origin: its origin echoed, the methods of the API, the headers a browser app sends. */
const answerCors = cors({
  origin: true,
  methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
  allowedHeaders: ['authorization', 'content-type', 'idempotency-key', 'last-event-id'],
  exposedHeaders: ['x-vercel-ai-ui-message-stream', 'retry-after'],
  maxAge: 600,
});
