import { randomBytes } from 'node:crypto';
import type { Queue } from 'bullmq';
import { AppError, notFound } from '../errors/app-error';
import { enqueueDelivery } from '../queue/webhook-queue';
import type { WebhookDelivery, WebhookEndpoint, WebhooksRepository } from '../store/webhooks-repository';
import type { SecretBox } from './secret-box';
import { generateWebhookSecret } from './webhook-signature';
import { resolveWebhookTarget } from './webhook-target';

export interface WebhookEndpointsDeps {
  webhooks: WebhooksRepository;
  webhookQueue: Queue;
  secretBox: SecretBox;
  allowPrivateNetworks: boolean;
  /** WEBHOOK_MAX_ENDPOINTS_PER_USER. */
  maxEndpointsPerUser: number;
}

/** How long the secret a rotation replaced keeps signing (the contract's 24 h). */
export const PREVIOUS_SECRET_TTL_MS = 24 * 3600_000;

/** What the API shows of an endpoint: never its secret (shown once, when made or rotated). */
export interface EndpointView {
  id: string;
  url: string;
  events: string[];
  description: string | null;
  createdAt: string;
  /** Set once the endpoint was disabled for failing; no event is recorded for it after that. */
  disabledAt: string | null;
  disabledReason: string | null;
  failingSince: string | null;
}

export const viewEndpoint = (endpoint: WebhookEndpoint): EndpointView => ({
  id: endpoint.id,
  url: endpoint.url,
  events: endpoint.events,
  description: endpoint.description,
  createdAt: endpoint.createdAt.toISOString(),
  disabledAt: endpoint.disabledAt?.toISOString() ?? null,
  disabledReason: endpoint.disabledReason,
  failingSince: endpoint.failingSince?.toISOString() ?? null,
});

/** Registers an endpoint after checking where its URL leads; returns it with its secret, the one time it is shown. */
export async function registerEndpoint(
  deps: WebhookEndpointsDeps,
  input: { userId: string; url: string; events: string[]; description?: string },
): Promise<EndpointView & { secret: string }> {
  const checked = await resolveWebhookTarget(input.url, { allowPrivateNetworks: deps.allowPrivateNetworks });
  if (!checked.ok) throw new AppError('invalid_request', `url refused: ${checked.reason}`, [{ field: 'url', message: checked.reason }]);
  const secret = generateWebhookSecret();
  const endpoint = await deps.webhooks.createEndpoint(
    {
      id: `wh_${randomBytes(12).toString('hex')}`,
      userId: input.userId,
      url: input.url,
      events: [...new Set(input.events)],
      description: input.description ?? null,
      secret: deps.secretBox.seal(secret),
    },
    deps.maxEndpointsPerUser,
  );
  if (!endpoint) throw endpointLimitReached(deps.maxEndpointsPerUser);
  return { ...viewEndpoint(endpoint), secret };
}

const endpointLimitReached = (limit: number) =>
  new AppError('invalid_request', `a user has at most ${limit} webhook endpoints (WEBHOOK_MAX_ENDPOINTS_PER_USER); delete one to register another`);

/** A new secret; the one it replaces keeps signing (both signatures sent) for {@link PREVIOUS_SECRET_TTL_MS}. */
export async function rotateEndpointSecret(
  deps: WebhookEndpointsDeps,
  userId: string,
  id: string,
  now = Date.now(),
): Promise<{ id: string; secret: string; previousSecretExpiresAt: string }> {
  const secret = generateWebhookSecret();
  const until = new Date(now + PREVIOUS_SECRET_TTL_MS);
  const endpoint = await deps.webhooks.rotateSecret(userId, id, deps.secretBox.seal(secret), until);
  if (!endpoint) throw notFound('webhook');
  return { id: endpoint.id, secret, previousSecretExpiresAt: until.toISOString() };
}

/** Sends a delivery again from its first attempt, under the same `webhook-id`, with 24 h of retries again. */
export async function redeliver(deps: WebhookEndpointsDeps, userId: string, endpointId: string, deliveryId: string): Promise<WebhookDelivery> {
  if (!(await deps.webhooks.getEndpoint(userId, endpointId))) throw notFound('webhook');
  const delivery = await deps.webhooks.resetForRedelivery(endpointId, deliveryId);
  if (!delivery) throw notFound('delivery');
  // Enqueued here for promptness; were this lost, the relay would add it (the row says not enqueued).
  // A job of this run's own: the previous run's may still be running (its outcome is then not
  // recorded) or waiting for a retry (it then finds the delivery redelivered and ends).
  await enqueueDelivery(deps.webhookQueue, delivery);
  await deps.webhooks.markEnqueued([delivery.id]);
  return delivery;
}
