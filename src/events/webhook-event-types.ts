import { z } from 'zod';

/** The events a webhook endpoint can take (docs/API.md, "Webhooks"); the triggers of migrations/0016_webhooks.sql record them, and `budget.exceeded` notice_budget_exceeded of 0034. */
export const WEBHOOK_EVENT_TYPES = ['turn.completed', 'turn.failed', 'turn.cancelled', 'turn.requires_action', 'batch.completed', 'batch.cancelled', 'budget.exceeded'] as const;

/** An endpoint's filter entry: one event type, or `*` for all. */
export const webhookEventFilterSchema = z.enum([...WEBHOOK_EVENT_TYPES, '*']);
export type WebhookEventFilter = z.infer<typeof webhookEventFilterSchema>;
