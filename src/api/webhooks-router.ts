import { Router } from 'express';
import { notFound } from '../errors/app-error';
import type { WebhookDelivery } from '../store/webhooks-repository';
import { redeliver, registerEndpoint, rotateEndpointSecret, viewEndpoint, type WebhookEndpointsDeps } from '../webhooks/webhook-endpoints';
import { userIdOf } from './require-user';
import { parseInput, parseRouteId } from './validate';
import {
  webhookCreatedSchema,
  webhookSchema,
  webhookDeletedSchema,
  webhookDeliveryPageSchema,
  webhookDeliverySchema,
  webhookListSchema,
  webhookSecretSchema,
} from './contract/webhooks-contract';
import { createWebhookSchema, listDeliveriesSchema } from './request-schemas';
import { sendJson } from './send-json';

export type WebhooksRouterDeps = WebhookEndpointsDeps;

/** `/v1/webhooks`: a user's endpoints, their secrets and their delivery log (docs/API.md, "Webhooks"). */
export function webhooksRouter(deps: WebhooksRouterDeps): Router {
  const router = Router();

  router.post('/', async (req, res) => {
    const input = parseInput(createWebhookSchema, req.body);
    sendJson(res, webhookCreatedSchema, await registerEndpoint(deps, { userId: userIdOf(res), ...input }), 201);
  });

  router.get('/', async (_req, res) => {
    const endpoints = await deps.webhooks.listEndpoints(userIdOf(res));
    sendJson(res, webhookListSchema, { data: endpoints.map(viewEndpoint) });
  });

  router.delete('/:id', async (req, res) => {
    const id = parseRouteId(req.params.id, 'webhook');
    if (!(await deps.webhooks.deleteEndpoint(userIdOf(res), id))) throw notFound('webhook');
    sendJson(res, webhookDeletedSchema, { id, deleted: true });
  });

  router.post('/:id/enable', async (req, res) => {
    const endpoint = await deps.webhooks.enableEndpoint(userIdOf(res), parseRouteId(req.params.id, 'webhook'));
    if (!endpoint) throw notFound('webhook');
    sendJson(res, webhookSchema, viewEndpoint(endpoint));
  });

  router.post('/:id/rotate-secret', async (req, res) => {
    sendJson(res, webhookSecretSchema, await rotateEndpointSecret(deps, userIdOf(res), parseRouteId(req.params.id, 'webhook')));
  });

  router.get('/:id/deliveries', async (req, res) => {
    const endpoint = await deps.webhooks.getEndpoint(userIdOf(res), parseRouteId(req.params.id, 'webhook'));
    if (!endpoint) throw notFound('webhook');
    const { limit, cursor } = parseInput(listDeliveriesSchema, req.query);
    const page = await deps.webhooks.listDeliveries(endpoint.id, { limit, ...(cursor ? { cursor } : {}) });
    sendJson(res, webhookDeliveryPageSchema, { data: page.data.map(viewDelivery), nextCursor: page.nextCursor });
  });

  router.post('/:id/deliveries/:deliveryId/redeliver', async (req, res) => {
    const endpointId = parseRouteId(req.params.id, 'webhook');
    const delivery = await redeliver(deps, userIdOf(res), endpointId, parseRouteId(req.params.deliveryId, 'delivery'));
    sendJson(res, webhookDeliverySchema, viewDelivery(delivery), 202);
  });

  return router;
}

function viewDelivery(delivery: WebhookDelivery) {
  return {
    id: delivery.id,
    eventId: delivery.eventId,
    type: delivery.type,
    status: delivery.status,
    attempts: delivery.attempts,
    ...(delivery.lastStatusCode !== null ? { lastStatusCode: delivery.lastStatusCode } : {}),
    ...(delivery.lastError !== null ? { lastError: delivery.lastError } : {}),
    ...(delivery.status === 'pending' && delivery.nextAttemptAt ? { nextAttemptAt: delivery.nextAttemptAt.toISOString() } : {}),
    createdAt: delivery.createdAt.toISOString(),
    ...(delivery.deliveredAt ? { deliveredAt: delivery.deliveredAt.toISOString() } : {}),
  };
}
