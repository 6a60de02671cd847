import { z } from 'zod';

/** The events a webhook endpoint can take (docs/API.md, "Webhooks"); the triggers of migrations/0016_webhooks.sql record them. */
export const WEBHOOK_EVENT_TYPES = ['turn.completed', 'turn.failed', 'turn.cancelled', 'turn.requires_action', 'batch.completed', 'batch.cancelled'] as const;

/** An endpoint's filter entry: one event type, or `*` for all. */
export const webhookEventFilterSchema = z.enum([...WEBHOOK_EVENT_TYPES, '*']);
export type WebhookEventFilter = z.infer<typeof webhookEventFilterSchema>;
