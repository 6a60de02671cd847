import express, { type Express, type RequestHandler } from 'express';
import type { Logger } from 'pino';
import type { Config } from '../config/config';
import type { Metrics } from '../metrics/metrics';
import { crossOrigin } from './cross-origin';
import { errorHandler, notFoundHandler } from './error-handler';
import { holdBodyBytes } from './body-bytes';
import { readJsonBody } from './json-body';
import { requireAdmin } from './require-admin';
import type { AppAddedNeeds, MountedRoutes, RouteFamily, RouteStage } from './route-family';
import type { SubmissionSlots } from './submission-slots';
import { userChecks, type UserCheckNeeds } from './user-checks';

/** What the app itself reads of the resources, for the checks and bodies of its stages. */
export interface AppNeeds extends UserCheckNeeds {
  config: Pick<Config, 'ALLOWED_ORIGINS' | 'ADMIN_TOKEN' | 'MAX_BODY_BYTES' | 'MAX_CHAT_BODY_BYTES'>;
  logger: Logger;
  metrics: Pick<Metrics, 'httpRequests'>;
  /** MAX_TURN_BODY_BYTES_IN_FLIGHT, shared by `POST /api/chat` and `POST /openai/v1/responses`. */
  turnBodyBytes: SubmissionSlots;
}

export interface ApiApp {
  app: Express;
  /** Ends every family's live streams (the server's drain). */
  endStreams(): void;
}

/**
 * The HTTP API as an express app: `families` mounted stage by stage (see RouteStage), in their
 * order within a stage, each handed `resources` (and every family's part of the document). The
 * caller owns the server (and the websocket gateway on it).
 */
export function createApiApp<Resources extends AppNeeds>(resources: Resources, families: readonly RouteFamily<NoInfer<Resources> & AppAddedNeeds>[]): ApiApp {
  const { config, logger } = resources;
  const app = express();
  app.disable('x-powered-by');
  app.set('query parser', 'simple');
  app.use(countRequests(resources.metrics));
  const needs = { ...resources, routeDocuments: families.map((family) => family.openApi) };
  const mounted: MountedRoutes[] = [];
  const mountStage = (stage: RouteStage) => {
    for (const family of families) {
      if (family.stage !== stage) continue;
      const routes = family.mount(app, needs);
      if (routes) mounted.push(routes);
    }
  };
  mountStage('public');
  // Before every credentials check: a browser's preflight carries none.
  app.use(['/v1', '/api'], crossOrigin({ allowedOrigins: config.ALLOWED_ORIGINS, logger }));
  // Before the API's body parsers: a batch may be JSONL, and larger than MAX_BODY_BYTES; an OpenAI file is an upload.
  mountStage('own-body');
  // Credentials and rate limits come before any body is read: a refused request's body is never
  // waited for (the error handler closes its connection), and costs no parsing.
  app.use('/v1/admin', requireAdmin(config.ADMIN_TOKEN, resources.authGuard), readJsonBody(config.MAX_BODY_BYTES));
  mountStage('admin');
  app.use(['/v1', '/api'], ...userChecks(resources));
  app.use('/v1', readJsonBody(config.MAX_BODY_BYTES));
  // Only its POST has a body: the rest of /api/chat takes nothing from the budget.
  app.use('/api/chat', holdBodyBytes(resources.turnBodyBytes, config.MAX_CHAT_BODY_BYTES), readJsonBody(config.MAX_CHAT_BODY_BYTES));
  mountStage('user');
  app.use(notFoundHandler);
  app.use(errorHandler(logger));
  return { app, endStreams: () => mounted.forEach((routes) => routes.endStreams()) };
}

function countRequests(metrics: AppNeeds['metrics']): RequestHandler {
  return (req, res, next) => {
    res.on('finish', () => {
      const route = req.route?.path ? `${req.baseUrl}${String(req.route.path)}` : 'unmatched';
      metrics.httpRequests.inc({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  };
}
