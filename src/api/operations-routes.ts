import type { ApiDeps } from './api-deps';
import { healthPaths } from './contract/health-contract';
import { healthRouter } from './health-router';
import { serveOpenApiDocument } from './openapi-route';
import { servePlayground } from './playground-route';
import type { RouteFamily, RouteFamilyDocument } from './route-family';

export interface OperationsNeeds {
  /** The parts of GET /openapi.json of every family the app mounts (the app hands them over). */
  routeDocuments: readonly RouteFamilyDocument[];
}

/** What needs no credentials: `/healthz`, `/readyz`, `/metrics`, the playground at `/`, and GET /openapi.json. */
export const operationsRoutes: RouteFamily<ApiDeps & OperationsNeeds> = {
  stage: 'public',
  openApi: { tag: { name: 'Operations' }, paths: healthPaths },
  mount: (app, deps) => {
    app.use(healthRouter({ checkReady: deps.checkReady, registry: deps.metrics.registry }));
    app.use(servePlayground(deps.playgroundDir));
    app.get('/openapi.json', serveOpenApiDocument(deps.routeDocuments));
  },
};
