import { z } from 'zod';
import { createWebhookSchema, listDeliveriesSchema } from '../request-schemas';
import { documentPaths, jsonResponse } from './operation';
import { count, idParams, pageOf, timestamp } from './shared-schemas';

export const webhookSchema = z
  .object({
    id: z.string(),
    url: z.string(),
    events: z.array(z.string()),
    description: z.string().nullable(),
    createdAt: timestamp,
    disabledAt: z.nullable(timestamp).meta({ description: 'Set when every delivery had failed for 3 days: no event is recorded for it since.' }),
    disabledReason: z.string().nullable(),
    failingSince: z.nullable(timestamp).meta({ description: 'The first failed attempt since the last success.' }),
  })
  .meta({ id: 'Webhook' });

export const webhookCreatedSchema = webhookSchema
  .extend({ secret: z.string().meta({ description: '`whsec_<base64>`: signs every delivery. Shown this once.' }) })
  .meta({ id: 'WebhookCreated' });

export const webhookListSchema = z.object({ data: z.array(webhookSchema) }).meta({ id: 'WebhookList' });

export const webhookDeletedSchema = z.object({ id: z.string(), deleted: z.literal(true) }).meta({ id: 'WebhookDeleted' });

export const webhookSecretSchema = z
  .object({
    id: z.string(),
    secret: z.string().meta({ description: 'The new secret, shown this once.' }),
    previousSecretExpiresAt: timestamp.check(z.describe('Until then deliveries carry a signature with each secret.')),
  })
  .meta({ id: 'WebhookSecret' });

export const webhookDeliverySchema = z
  .object({
    id: z.string(),
    eventId: z.string().meta({ description: 'The `webhook-id` of every attempt.' }),
    type: z.string(),
    status: z.enum(['pending', 'delivered', 'failed']),
    attempts: count,
    lastStatusCode: z.number().int().optional(),
    lastError: z.string().optional().meta({ description: "The last failure; a receiver's answer is cut to its first 200 characters." }),
    nextAttemptAt: z.optional(timestamp),
    createdAt: timestamp,
    deliveredAt: z.optional(timestamp),
  })
  .meta({ id: 'WebhookDelivery' });

export const webhookDeliveryPageSchema = pageOf(webhookDeliverySchema).check(z.meta({ id: 'WebhookDeliveryPage' }));

const webhookId = idParams('webhook');

export const webhookPaths = documentPaths('Webhooks', {
  '/v1/webhooks': {
    post: {
      operationId: 'createWebhook',
      summary: 'Register an endpoint for events',
      description: 'A URL whose host resolves to a loopback, private or link-local address is refused (400) unless WEBHOOK_ALLOW_PRIVATE_NETWORKS=true.',
      access: 'user',
      jsonBody: createWebhookSchema,
      responses: { '201': jsonResponse('The endpoint, with its secret (shown this once).', webhookCreatedSchema) },
    },
    get: {
      operationId: 'listWebhooks',
      summary: "The user's endpoints",
      access: 'user',
      responses: { '200': jsonResponse('The endpoints, oldest first.', webhookListSchema) },
    },
  },
  '/v1/webhooks/{id}': {
    delete: {
      operationId: 'deleteWebhook',
      summary: 'Delete an endpoint: its pending deliveries are not sent',
      access: 'user',
      requestParams: { path: webhookId },
      responses: { '200': jsonResponse('Deleted.', webhookDeletedSchema) },
      errors: ['not_found'],
    },
  },
  '/v1/webhooks/{id}/rotate-secret': {
    post: {
      operationId: 'rotateWebhookSecret',
      summary: 'A new secret; the old one keeps signing for 24 h',
      access: 'user',
      requestParams: { path: webhookId },
      responses: { '200': jsonResponse('The new secret.', webhookSecretSchema) },
      errors: ['not_found'],
    },
  },
  '/v1/webhooks/{id}/enable': {
    post: {
      operationId: 'enableWebhook',
      summary: 'Take an endpoint disabled for failing back into service',
      description:
        'Events are recorded for it again from now on; those that ended while it was disabled were not recorded, and its failed deliveries can be sent again with redeliver.',
      access: 'user',
      requestParams: { path: webhookId },
      responses: { '200': jsonResponse('The endpoint, enabled.', webhookSchema) },
      errors: ['not_found'],
    },
  },
  '/v1/webhooks/{id}/deliveries': {
    get: {
      operationId: 'listWebhookDeliveries',
      summary: "The endpoint's deliveries, newest first",
      access: 'user',
      requestParams: { path: webhookId, query: listDeliveriesSchema },
      responses: { '200': jsonResponse('A page of deliveries.', webhookDeliveryPageSchema) },
      errors: ['not_found'],
    },
  },
  '/v1/webhooks/{id}/deliveries/{deliveryId}/redeliver': {
    post: {
      operationId: 'redeliverWebhook',
      summary: 'Send a delivery again, from its first attempt, with the same webhook-id',
      access: 'user',
      requestParams: { path: webhookId.extend({ deliveryId: z.string().meta({ description: "The delivery's id." }) }) },
      responses: { '202': jsonResponse('The delivery, pending again.', webhookDeliverySchema) },
      errors: ['not_found'],
    },
  },
});
