import type { Config } from '../config/config';
import type { Metrics } from '../metrics/metrics';
import { healthPaths } from './contract/health-contract';
import { healthRouter, type HealthDeps } from './health-router';
import { serveOpenApiDocument } from './openapi-route';
import { servePlayground } from './playground-route';
import type { AppAddedNeeds, RouteFamily } from './route-family';

interface OperationsRoutesNeeds extends AppAddedNeeds, Pick<HealthDeps, 'checkReady'> {
  /** PLAYGROUND_DIR: the playground bundle served at `/`. */
  config: Pick<Config, 'PLAYGROUND_DIR'>;
  metrics: Pick<Metrics, 'registry'>;
}

/** What needs no credentials: `/healthz`, `/readyz`, `/metrics`, the playground at `/`, and GET /openapi.json. */
export const operationsRoutes: RouteFamily<OperationsRoutesNeeds> = {
  stage: 'public',
  openApi: { tag: { name: 'Operations' }, paths: healthPaths },
  mount: (app, needs) => {
    app.use(healthRouter({ checkReady: needs.checkReady, registry: needs.metrics.registry }));
    app.use(servePlayground(needs.config.PLAYGROUND_DIR));
    app.get('/openapi.json', serveOpenApiDocument(needs.routeDocuments));
  },
};
