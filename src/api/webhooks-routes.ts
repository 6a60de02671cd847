import type { ApiDeps } from './api-deps';
import { webhookPaths } from './contract/webhooks-contract';
import type { RouteFamily } from './route-family';
import { webhooksRouter } from './webhooks-router';

/** `/v1/webhooks` (docs/API.md, "Webhooks"): endpoints, their secrets, their deliveries. */
export const webhooksRoutes: RouteFamily<ApiDeps> = {
  stage: 'user',
  openApi: { tag: { name: 'Webhooks', description: 'Signed the Standard Webhooks way; delivered at least once.' }, paths: webhookPaths },
  mount: (app, deps) => {
    app.use('/v1/webhooks', webhooksRouter(deps.webhooks));
  },
};
