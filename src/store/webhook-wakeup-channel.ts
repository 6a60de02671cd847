import { createHash } from 'node:crypto';

/**
 * The channel record_webhook_event notifies when it records deliveries (migration 0022):
 * 'switchyard_webhooks_' || md5(current_schema()), one per schema, so that deployments sharing
 * a database wake only their own relays. DATABASE_SCHEMA is lower-case, so it is current_schema() as is.
 */
export const webhookWakeupChannel = (schema: string) => `switchyard_webhooks_${createHash('md5').update(schema).digest('hex')}`;
