import type { Config } from '../config/config';
import type { WebhookEndpointsDeps } from '../webhooks/webhook-endpoints';
import { webhookPaths } from './contract/webhooks-contract';
import type { RouteFamily } from './route-family';
import { webhooksRouter } from './webhooks-router';

interface WebhooksRoutesNeeds extends Pick<WebhookEndpointsDeps, 'webhooks' | 'webhookQueue' | 'secretBox'> {
  config: Pick<Config, 'WEBHOOK_ALLOW_PRIVATE_NETWORKS' | 'WEBHOOK_MAX_ENDPOINTS_PER_USER'>;
}

/** `/v1/webhooks` (docs/API.md, "Webhooks"): endpoints, their secrets, their deliveries (redelivered through the delivery queue). */
export const webhooksRoutes: RouteFamily<WebhooksRoutesNeeds> = {
  stage: 'user',
  openApi: { tag: { name: 'Webhooks', description: 'Signed the Standard Webhooks way; delivered at least once.' }, paths: webhookPaths },
  mount: (app, needs) => {
    app.use(
      '/v1/webhooks',
      webhooksRouter({
        webhooks: needs.webhooks,
        webhookQueue: needs.webhookQueue,
        secretBox: needs.secretBox,
        allowPrivateNetworks: needs.config.WEBHOOK_ALLOW_PRIVATE_NETWORKS,
        maxEndpointsPerUser: needs.config.WEBHOOK_MAX_ENDPOINTS_PER_USER,
      }),
    );
  },
};
