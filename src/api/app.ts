import express, { type Express, type RequestHandler } from 'express';
import type { Metrics } from '../metrics/metrics';
import type { ApiDeps } from './api-deps';
import { apiRouteFamilies } from './api-route-families';
import { crossOrigin } from './cross-origin';
import { errorHandler, notFoundHandler } from './error-handler';
import { readJsonBody } from './json-body';
import { requireAdmin } from './require-admin';
import type { RouteStage } from './route-family';
import { userChecks } from './user-checks';

/**
 * The HTTP API as an express app, its route families mounted stage by stage (see RouteStage);
 * the caller owns the server (and the websocket gateway on it).
 */
export function createApiApp(deps: ApiDeps): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use(countRequests(deps.metrics));
  const needs = { ...deps, routeDocuments: apiRouteFamilies.map((family) => family.openApi) };
  const mountStage = (stage: RouteStage) => {
    for (const family of apiRouteFamilies) if (family.stage === stage) family.mount(app, needs);
  };
  mountStage('public');
  // Before every credentials check: a browser's preflight carries none.
  app.use(['/v1', '/api'], crossOrigin({ allowedOrigins: deps.allowedOrigins, logger: deps.logger }));
  // Before the API's body parsers: a batch may be JSONL, and larger than MAX_BODY_BYTES; an OpenAI file is an upload.
  mountStage('own-body');
  // Credentials and rate limits come before any body is read: a refused request's body is never
  // waited for (the error handler closes its connection), and costs no parsing.
  app.use('/v1/admin', requireAdmin(deps.adminToken, deps.authGuard), readJsonBody(deps.maxBodyBytes));
  mountStage('admin');
  app.use(['/v1', '/api'], ...userChecks(deps));
  app.use('/v1', readJsonBody(deps.maxBodyBytes));
  app.use('/api/chat', readJsonBody(deps.maxChatBodyBytes));
  mountStage('user');
  app.use(notFoundHandler);
  app.use(errorHandler(deps.logger));
  return app;
}

function countRequests(metrics: Metrics): RequestHandler {
  return (req, res, next) => {
    res.on('finish', () => {
      const route = req.route?.path ? `${req.baseUrl}${String(req.route.path)}` : 'unmatched';
      metrics.httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  };
}
