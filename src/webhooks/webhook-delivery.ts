import type { Logger } from 'pino';
import type { Metrics, WEBHOOK_ATTEMPT_OUTCOMES } from '../metrics/metrics';
import type { WebhookJobData } from '../queue/job-catalog';
import { toStorableText } from '../storable/storable-text';
import type { WebhookDelivery, WebhookEndpoint, WebhooksRepository } from '../store/webhooks-repository';
import { decideRetry, type RetrySchedule } from './retry-schedule';
import type { DeliveryBatches } from './delivery-batches';
import type { PerKeyCap } from '../limits/per-key-cap';
import { liveSecrets } from './live-secrets';
import type { SecretBox } from './secret-box';
import type { WebhookConnections } from './webhook-connections';
import { sendWebhook, type AttemptOutcome } from './webhook-sender';
import { signWebhook } from './webhook-signature';
import { resolveWebhookTarget, type TargetPolicy } from './webhook-target';

export interface WebhookDeliveryDeps {
  webhooks: WebhooksRepository;
  /** The read and the success of every attempt, shared by attempts running at once. */
  batches: DeliveryBatches;
  secretBox: SecretBox;
  /** Kept-alive connections to receivers, per checked address. */
  connections: WebhookConnections;
  /** This process's attempts in flight per endpoint (WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT). */
  slots: PerKeyCap;
  metrics: Pick<Metrics, 'webhookDeliveries' | 'webhookAttempts' | 'webhookAttemptsDeferred' | 'webhookLag'>;
  logger: Logger;
  settings: {
    timeoutMs: number;
    schedule: RetrySchedule;
    disableAfterMs: number;
    allowPrivateNetworks: boolean;
  };
  /** The clock (injectable for tests). */
  now?: () => number;
  /** Resolves a receiver's host name at each attempt (injectable for tests); the system's resolver by default. */
  resolve?: TargetPolicy['resolve'];
}

/**
 * What the delivery's job does next: nothing (delivered, failed for good, gone), run again at `at`
 * for its next attempt, or run again soon at `at` because its endpoint had no free slot (no attempt made).
 */
export type DeliveryNext = { kind: 'done' } | { kind: 'retry'; at: Date } | { kind: 'deferred'; at: Date };

/**
 * How long a delivery whose endpoint is at its cap waits before it looks again: short, as a slot
 * frees when any attempt to the endpoint ends, and spread so the waiting jobs do not come back together.
 */
const DEFER_MIN_MS = 500;
const DEFER_SPREAD_MS = 500;

/**
 * One attempt of a delivery:
 * 1. Reads the delivery with its endpoint; one no longer pending (delivered, redelivered and
 *    done, its endpoint deleted) is done, and so is one redelivered after the job's run began.
 * 2. A disabled endpoint's delivery fails without an attempt.
 * 3. Takes one of the endpoint's slots in this process; with none free the attempt is not made
 *    (nor counted) and the job looks again shortly, leaving the worker's slot to other endpoints.
 * 4. Resolves and checks the URL's host (webhook-target.ts); a refused host is a failed attempt.
 * 5. Signs the body with every live secret and POSTs it to the checked address, on a
 *    connection kept alive to that address when there is one.
 * 6. Records the outcome: delivered, or the next attempt by the retry schedule, or failed; an
 *    endpoint failing for WEBHOOK_DISABLE_AFTER_MS is disabled here. A redeliver during the
 *    attempt wins: the outcome is not recorded, and the redeliver's run (its own job) goes on.
 * An attempt that cannot be made (a secret WEBHOOK_SECRET_KEY no longer opens, any other error
 * before the request) is a failed attempt too: thrown, it would leave the delivery pending with
 * its attempts uncounted, and its job and the relay would try it again without end.
 */
export async function attemptDelivery(deps: WebhookDeliveryDeps, run: WebhookJobData): Promise<DeliveryNext> {
  const now = deps.now ?? Date.now;
  const found = await deps.batches.pendingWithEndpoint(run.deliveryId);
  if (!found) return { kind: 'done' };
  const { delivery, endpoint } = found;
  // Redelivered since this job's run began: the redeliver's run has a job of its own.
  if ((delivery.redeliveredAt?.getTime() ?? null) !== run.redeliveredAt) return { kind: 'done' };
  if (endpoint.disabledAt) {
    await deps.webhooks.failUnsent(delivery.id, `the endpoint is disabled: ${endpoint.disabledReason ?? 'disabled'}`);
    deps.metrics.webhookDeliveries.inc({ event: delivery.type, outcome: 'failed' });
    return { kind: 'done' };
  }

  const release = deps.slots.take(endpoint.id);
  if (!release) {
    deps.metrics.webhookAttemptsDeferred.inc();
    return { kind: 'deferred', at: new Date(now() + DEFER_MIN_MS + Math.floor(Math.random() * DEFER_SPREAD_MS)) };
  }
  let outcome: AttemptOutcome | Refused | Unattempted;
  try {
    outcome = await attempt(deps, delivery, endpoint, now()).catch((error: unknown): Unattempted => {
      deps.logger.error({ err: error, deliveryId: delivery.id, endpointId: endpoint.id }, 'webhook attempt could not be made');
      return { kind: 'unattempted', reason: 'the attempt could not be made: an internal error (see the server log)' };
    });
  } finally {
    release();
  }
  if (outcome.kind === 'answered' && outcome.ok) {
    await deps.batches.markDelivered(delivery, outcome.statusCode);
    deps.metrics.webhookAttempts.inc({ outcome: 'success' });
    deps.metrics.webhookDeliveries.inc({ event: delivery.type, outcome: 'delivered' });
    deps.metrics.webhookLag.observe(Math.max(0, now() - startedAt(delivery).getTime()) / 1000);
    return { kind: 'done' };
  }

  const record = describeFailure(outcome);
  deps.metrics.webhookAttempts.inc({ outcome: record.outcome });
  const decision = decideRetry(deps.settings.schedule, { failedAttempts: delivery.attempts + 1, sinceStartMs: now() - startedAt(delivery).getTime() });
  const nextAt = decision.kind === 'retry' ? new Date(now() + decision.delayMs) : null;
  // A receiver's answer or an error message may hold a NUL, which PostgreSQL refuses in text: the
  // write would fail and leave the attempt unrecorded, to be made again without end.
  const attempted = { statusCode: record.statusCode, error: toStorableText(record.error) };
  const { recorded, disabled } = await deps.webhooks.markAttemptFailed(delivery, attempted, nextAt, deps.settings.disableAfterMs);
  if (!recorded) return { kind: 'done' };
  if (disabled) deps.logger.warn({ endpointId: endpoint.id }, 'webhook endpoint disabled: its deliveries have failed for too long');
  if (!nextAt) {
    deps.metrics.webhookDeliveries.inc({ event: delivery.type, outcome: 'failed' });
    return { kind: 'done' };
  }
  // A disabled endpoint's delivery fails on its next run (step 2), not at once: one code path.
  return { kind: 'retry', at: nextAt };
}

type Refused = { kind: 'refused'; reason: string };
type Unattempted = { kind: 'unattempted'; reason: string };

/**
 * When the delivery's first attempt was due: its event, or the redeliver that sent it again. A
 * redelivery starts a retry window of its own (an event older than the window still gets its
 * retries), and its lag runs from the redeliver, not from days of an outage.
 */
const startedAt = (delivery: WebhookDelivery): Date => delivery.redeliveredAt ?? delivery.createdAt;

async function attempt(deps: WebhookDeliveryDeps, delivery: WebhookDelivery, endpoint: WebhookEndpoint, nowMs: number): Promise<AttemptOutcome | Refused | Unattempted> {
  const checked = await resolveWebhookTarget(endpoint.url, { allowPrivateNetworks: deps.settings.allowPrivateNetworks, resolve: deps.resolve });
  if (!checked.ok) return { kind: 'refused', reason: checked.reason };
  let secrets: string[];
  try {
    secrets = liveSecrets(deps.secretBox, endpoint, nowMs);
  } catch (error) {
    deps.logger.error({ err: error, endpointId: endpoint.id }, 'webhook secret cannot be decrypted: was WEBHOOK_SECRET_KEY changed?');
    return { kind: 'unattempted', reason: "the endpoint's signing secret cannot be decrypted (WEBHOOK_SECRET_KEY changed?); rotate its secret" };
  }
  const { payload } = delivery;
  // The contract's field order; jsonb keeps its own.
  const body = JSON.stringify({ id: payload.id, type: payload.type, createdAt: payload.createdAt, data: payload.data });
  const headers = signWebhook({ id: delivery.eventId, timestamp: Math.floor(nowMs / 1000), body, secrets });
  return sendWebhook(checked.target, deps.connections.agentFor(checked.target), { headers, body, timeoutMs: deps.settings.timeoutMs });
}

function describeFailure(outcome: Exclude<AttemptOutcome, { kind: 'answered'; ok: true }> | Refused | Unattempted): {
  outcome: Exclude<(typeof WEBHOOK_ATTEMPT_OUTCOMES)[number], 'success'>;
  statusCode: number | null;
  error: string;
} {
  switch (outcome.kind) {
    case 'answered':
      return { outcome: 'http_error', statusCode: outcome.statusCode, error: `HTTP ${outcome.statusCode}${outcome.bodyExcerpt ? `: ${outcome.bodyExcerpt}` : ''}` };
    case 'timeout':
      return { outcome: 'timeout', statusCode: null, error: 'no answer within the attempt timeout' };
    case 'network_error':
      return { outcome: 'network_error', statusCode: null, error: outcome.message };
    case 'refused':
      return { outcome: 'refused', statusCode: null, error: outcome.reason };
    case 'unattempted':
      return { outcome: 'unattempted', statusCode: null, error: outcome.reason };
  }
}
