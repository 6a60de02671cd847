import cors from 'cors';
import type { RequestHandler } from 'express';
import type { Logger } from 'pino';
import { isOriginAllowed, refusedOriginLog } from '../auth/origin-policy';
import { AppError } from '../errors/app-error';
import { crossOriginMayUse } from './session-scope';

/**
 * CORS for browser apps on other origins, decided as the websocket's Origin check is (ALLOWED_ORIGINS;
 * with none, only the API's own origin), on the routes a session token may use (session-scope.ts).
 * Mounted before any credentials check: a preflight carries none, so it is answered here, and never
 * counts as a failed login. A preflight that cannot succeed is answered 403 with the reason (an origin
 * not allowed: what to set, also logged once per origin; a route not open to browsers: that it
 * needs the API key), where a bare 401 would leave a developer guessing. A real request from an
 * origin not allowed goes on without CORS headers, so the browser keeps its answer from the page.
 */
export function crossOrigin(options: { allowedOrigins: readonly string[]; logger: Logger }): RequestHandler {
  const { allowedOrigins } = options;
  const refuseOrigin = refusedOriginLog(options.logger);

  return (req, res, next) => {
    const origin = req.headers.origin;
    const requestedMethod = req.headers['access-control-request-method'];
    const isPreflight = req.method === 'OPTIONS' && origin !== undefined && requestedMethod !== undefined;
    const method = isPreflight ? requestedMethod.toUpperCase() : req.method;
    const path = `${req.baseUrl}${req.path}`;
    res.vary('Origin');

    if (!crossOriginMayUse(method, path)) {
      if (!isPreflight) return next();
      throw new AppError('forbidden', `${method} ${path} is not open to browsers on other origins: it needs the API key, which belongs on a server`);
    }
    if (!isOriginAllowed(origin, req.headers.host, allowedOrigins)) {
      if (!isPreflight) return next();
      const reason = refuseOrigin(origin, req.headers.host, allowedOrigins);
      throw new AppError('forbidden', reason, { origin, setting: 'ALLOWED_ORIGINS' });
    }
    return answerCors(req, res, next);
  };
}

/** The CORS answer for an allowed origin: its origin echoed, the headers a browser app sends. */
const answerCors = cors({
  origin: true,
  methods: ['GET', 'HEAD', 'POST'],
  allowedHeaders: ['authorization', 'content-type', 'idempotency-key', 'last-event-id'],
  exposedHeaders: ['x-vercel-ai-ui-message-stream', 'retry-after'],
  maxAge: 600,
});
