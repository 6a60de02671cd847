import type { Db } from './db';

export type DeliveryStatus = 'pending' | 'delivered' | 'failed';

export interface WebhookEndpoint {
  id: string;
  userId: string;
  url: string;
  events: string[];
  description: string | null;
  /** Encrypted (see webhooks/secret-box.ts). */
  secret: string;
  previousSecret: string | null;
  previousSecretUntil: Date | null;
  failingSince: Date | null;
  disabledAt: Date | null;
  disabledReason: string | null;
  createdAt: Date;
}

export interface WebhookDelivery {
  id: string;
  endpointId: string;
  eventId: string;
  type: string;
  /** The body sent: {id, type, createdAt, data}. */
  payload: { id: string; type: string; createdAt: string; data: unknown };
  status: DeliveryStatus;
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  nextAttemptAt: Date | null;
  createdAt: Date;
  deliveredAt: Date | null;
  /** When it was last sent again by redeliver: its retries run from then, not from the event. */
  redeliveredAt: Date | null;
}

/** What an attempt left: its status code (when the receiver answered) and error (when it failed). */
export interface AttemptRecord {
  statusCode: number | null;
  error: string | null;
}

interface EndpointRow {
  id: string;
  user_id: string;
  url: string;
  events: string[];
  description: string | null;
  secret: string;
  previous_secret: string | null;
  previous_secret_until: Date | null;
  failing_since: Date | null;
  disabled_at: Date | null;
  disabled_reason: string | null;
  created_at: Date;
}

interface DeliveryRow {
  id: string;
  ordinal: string;
  endpoint_id: string;
  event_id: string;
  type: string;
  payload: WebhookDelivery['payload'];
  status: DeliveryStatus;
  attempts: number;
  last_status_code: number | null;
  last_error: string | null;
  next_attempt_at: Date | null;
  created_at: Date;
  delivered_at: Date | null;
  redelivered_at: Date | null;
}

/** A pending delivery's run, for its job: which run it is and when its next attempt is due. */
export interface DeliveryToRun {
  id: string;
  nextAttemptAt: Date | null;
  redeliveredAt: Date | null;
}

type RunRow = Pick<DeliveryRow, 'id' | 'next_attempt_at' | 'redelivered_at'>;

/**
 * Where a page of overdue deliveries ended: the last one's `next_attempt_at` as PostgreSQL
 * writes it (microseconds, which a JavaScript Date would round to milliseconds and so read
 * rows of that millisecond again) and its id.
 */
export interface OverdueCursor {
  at: string;
  id: string;
}

/**
 * What an attempt read of its delivery: its outcome is recorded only while the delivery is still
 * so. A redeliver during the attempt changed it (attempts back to 0, a new `redelivered_at`), and
 * its run, with a job of its own, is the one to record; the attempt's stale count and retry
 * window must not overwrite it.
 */
export type AttemptBasis = Pick<WebhookDelivery, 'id' | 'attempts' | 'redeliveredAt'>;

/** `redelivered_at` in whole ms, as JavaScript's Date reads it: the run an attempt read. */
const REDELIVERED_MS = `floor(extract(epoch FROM redelivered_at) * 1000)::bigint`;

/** Endpoints and their deliveries; the delivery rows themselves are written by triggers (migrations/0016_webhooks.sql). */
export class WebhooksRepository {
  constructor(private readonly db: Db) {}

  /**
   * Registers the endpoint unless the user has `maxPerUser` already (null then). The user's row
   * is locked while counting, so registrations at once count each other; `NO KEY` leaves rows
   * that reference the user (turns, conversations) free to be written meanwhile.
   */
  async createEndpoint(input: Pick<WebhookEndpoint, 'id' | 'userId' | 'url' | 'events' | 'description' | 'secret'>, maxPerUser: number): Promise<WebhookEndpoint | null> {
    return this.db.transaction(async (tx) => {
      await tx.query('SELECT 1 FROM users WHERE id = $1 FOR NO KEY UPDATE', [input.userId]);
      const { rows: counted } = await tx.query<{ endpoints: number }>('SELECT count(*)::int AS endpoints FROM webhook_endpoints WHERE user_id = $1', [input.userId]);
      if (counted[0]!.endpoints >= maxPerUser) return null;
      const { rows } = await tx.query<EndpointRow>('INSERT INTO webhook_endpoints (id, user_id, url, events, description, secret) VALUES ($1, $2, $3, $4, $5, $6) RETURNING *', [
        input.id,
        input.userId,
        input.url,
        input.events,
        input.description,
        input.secret,
      ]);
      return toEndpoint(rows[0]!);
    });
  }

  async listEndpoints(userId: string): Promise<WebhookEndpoint[]> {
    const { rows } = await this.db.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE user_id = $1 ORDER BY ordinal', [userId]);
    return rows.map(toEndpoint);
  }

  async getEndpoint(userId: string, id: string): Promise<WebhookEndpoint | null> {
    const { rows } = await this.db.query<EndpointRow>('SELECT * FROM webhook_endpoints WHERE id = $1 AND user_id = $2', [id, userId]);
    return rows[0] ? toEndpoint(rows[0]) : null;
  }

  /** Deletes the endpoint and its deliveries: a delivery job that runs later finds nothing to send. */
  async deleteEndpoint(userId: string, id: string): Promise<boolean> {
    const { rows } = await this.db.query('DELETE FROM webhook_endpoints WHERE id = $1 AND user_id = $2 RETURNING id', [id, userId]);
    return rows.length > 0;
  }

  /** Takes a disabled endpoint back into service: events are recorded for it again, and its failing clock starts afresh. */
  async enableEndpoint(userId: string, id: string): Promise<WebhookEndpoint | null> {
    const { rows } = await this.db.query<EndpointRow>(
      `UPDATE webhook_endpoints SET disabled_at = NULL, disabled_reason = NULL, failing_since = NULL
       WHERE id = $1 AND user_id = $2 RETURNING *`,
      [id, userId],
    );
    return rows[0] ? toEndpoint(rows[0]) : null;
  }

  /** The new secret signs from now on; the current one keeps signing too until `previousUntil`. */
  async rotateSecret(userId: string, id: string, secret: string, previousUntil: Date): Promise<WebhookEndpoint | null> {
    const { rows } = await this.db.query<EndpointRow>(
      `UPDATE webhook_endpoints SET previous_secret = secret, previous_secret_until = $4, secret = $3
       WHERE id = $1 AND user_id = $2 RETURNING *`,
      [id, userId, secret, previousUntil],
    );
    return rows[0] ? toEndpoint(rows[0]) : null;
  }

  /** Newest first; `cursor` is the `nextCursor` of the page before. */
  async listDeliveries(endpointId: string, page: { cursor?: string; limit: number }): Promise<{ data: WebhookDelivery[]; nextCursor: string | null }> {
    const { rows } = await this.db.query<DeliveryRow>(
      `SELECT * FROM webhook_deliveries WHERE endpoint_id = $1 AND ($2::bigint IS NULL OR ordinal < $2::bigint)
       ORDER BY ordinal DESC LIMIT $3`,
      [endpointId, page.cursor ?? null, page.limit + 1],
    );
    const data = rows.slice(0, page.limit);
    return { data: data.map(toDelivery), nextCursor: rows.length > page.limit ? data[data.length - 1]!.ordinal : null };
  }

  async getDelivery(endpointId: string, id: string): Promise<WebhookDelivery | null> {
    const { rows } = await this.db.query<DeliveryRow>('SELECT * FROM webhook_deliveries WHERE id = $1 AND endpoint_id = $2', [id, endpointId]);
    return rows[0] ? toDelivery(rows[0]) : null;
  }

  /** The pending ones of these deliveries with their endpoints, for attempts; one missing has nothing to send. */
  async pendingWithEndpoints(ids: readonly string[]): Promise<Map<string, { delivery: WebhookDelivery; endpoint: WebhookEndpoint }>> {
    const { rows } = await this.db.query<{ delivery: DeliveryRow; endpoint: EndpointRow }>(
      `SELECT to_jsonb(d) AS delivery, to_jsonb(e) AS endpoint
       FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
       WHERE d.id = ANY($1::text[]) AND d.status = 'pending'`,
      [ids],
    );
    return new Map(rows.map((row) => [row.delivery.id, { delivery: toDelivery(jsonDates(row.delivery)), endpoint: toEndpoint(jsonDates(row.endpoint)) }]));
  }

  /**
   * Successful attempts, each with its answer's status code: those deliveries are done and their
   * endpoints no longer failing. One redelivered since its attempt read it is left to its new run.
   */
  async markDelivered(successes: readonly { delivery: AttemptBasis; statusCode: number }[]): Promise<void> {
    await this.db.query(
      `WITH d AS (
         UPDATE webhook_deliveries w SET status = 'delivered', attempts = w.attempts + 1, last_status_code = s.status_code, last_error = NULL,
           next_attempt_at = NULL, delivered_at = clock_timestamp()
         FROM unnest($1::text[], $2::int[], $3::int[], $4::bigint[]) AS s(id, status_code, read_attempts, read_redelivered_ms)
         WHERE w.id = s.id AND w.status = 'pending' AND w.attempts = s.read_attempts AND ${REDELIVERED_MS} IS NOT DISTINCT FROM s.read_redelivered_ms
         RETURNING w.endpoint_id)
       UPDATE webhook_endpoints SET failing_since = NULL WHERE id IN (SELECT endpoint_id FROM d) AND failing_since IS NOT NULL`,
      [
        successes.map((each) => each.delivery.id),
        successes.map((each) => each.statusCode),
        successes.map((each) => each.delivery.attempts),
        successes.map((each) => each.delivery.redeliveredAt?.getTime() ?? null),
      ],
    );
  }

  /**
   * A failed attempt: retried at `nextAttemptAt`, or failed for good when null. The endpoint
   * counts as failing from its first failure after a success, and is disabled once it has been
   * failing for `disableAfterMs`. Returns whether it was recorded (not when the delivery was
   * redelivered since the attempt read it: its new run has a job of its own) and whether this
   * attempt disabled the endpoint.
   */
  async markAttemptFailed(delivery: AttemptBasis, attempt: AttemptRecord, nextAttemptAt: Date | null, disableAfterMs: number): Promise<{ recorded: boolean; disabled: boolean }> {
    const { rows } = await this.db.query<{ disabled: boolean }>(
      `WITH d AS (
         UPDATE webhook_deliveries SET attempts = attempts + 1, last_status_code = $2, last_error = $3, next_attempt_at = $4,
           status = CASE WHEN $4::timestamptz IS NULL THEN 'failed' ELSE 'pending' END
         WHERE id = $1 AND status = 'pending' AND attempts = $6 AND ${REDELIVERED_MS} IS NOT DISTINCT FROM $7::bigint
         RETURNING endpoint_id),
       s AS (
         SELECT id, failing_since, disabled_at IS NULL AND failing_since < clock_timestamp() - make_interval(secs => $5::double precision / 1000) AS disabling
         FROM webhook_endpoints WHERE id = (SELECT endpoint_id FROM d))
       UPDATE webhook_endpoints w SET failing_since = COALESCE(w.failing_since, clock_timestamp()),
         disabled_at = CASE WHEN s.disabling THEN clock_timestamp() ELSE w.disabled_at END,
         disabled_reason = CASE WHEN s.disabling
           THEN 'every delivery failed since ' || to_char(s.failing_since AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') ELSE w.disabled_reason END
       FROM s WHERE w.id = s.id
       RETURNING s.disabling AS disabled`,
      [delivery.id, attempt.statusCode, attempt.error, nextAttemptAt, disableAfterMs, delivery.attempts, delivery.redeliveredAt?.getTime() ?? null],
    );
    return { recorded: rows.length > 0, disabled: rows[0]?.disabled ?? false };
  }

  /** A disabled endpoint's pending delivery ends without an attempt. */
  async failUnsent(id: string, reason: string): Promise<void> {
    await this.db.query("UPDATE webhook_deliveries SET status = 'failed', last_error = $2, next_attempt_at = NULL WHERE id = $1 AND status = 'pending'", [id, reason]);
  }

  /**
   * Sends the delivery again from its first attempt, under the same event id, with its retries'
   * window starting now; null when unknown. `redelivered_at` names the new run (its job id, what
   * its attempts read): whole ms, so JavaScript reads it exactly, and later than the run before
   * even within one ms.
   */
  async resetForRedelivery(endpointId: string, id: string): Promise<WebhookDelivery | null> {
    const { rows } = await this.db.query<DeliveryRow>(
      `UPDATE webhook_deliveries SET status = 'pending', attempts = 0, last_status_code = NULL, last_error = NULL,
         next_attempt_at = clock_timestamp(), enqueued_at = NULL, delivered_at = NULL,
         redelivered_at = date_trunc('milliseconds', GREATEST(clock_timestamp(), redelivered_at + interval '1 millisecond'))
       WHERE id = $1 AND endpoint_id = $2 RETURNING *`,
      [id, endpointId],
    );
    return rows[0] ? toDelivery(rows[0]) : null;
  }

  /** Pending deliveries no job was added for yet (the outbox), oldest first. */
  async unenqueued(limit: number): Promise<DeliveryToRun[]> {
    const { rows } = await this.db.query<RunRow>(
      "SELECT id, next_attempt_at, redelivered_at FROM webhook_deliveries WHERE status = 'pending' AND enqueued_at IS NULL ORDER BY ordinal LIMIT $1",
      [limit],
    );
    return rows.map(toRun);
  }

  async markEnqueued(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    await this.db.query('UPDATE webhook_deliveries SET enqueued_at = clock_timestamp() WHERE id = ANY($1) AND enqueued_at IS NULL', [ids]);
  }

  /**
   * A page of the pending deliveries with a job that should have run `graceMs` ago: their job may
   * be gone (a Redis that lost its data). In (next_attempt_at, id) order, from after `after` (the
   * `next` of the page before; null: from the first); `next` is where this page ended.
   */
  async overdue(graceMs: number, limit: number, after: OverdueCursor | null = null): Promise<{ runs: DeliveryToRun[]; next: OverdueCursor | null }> {
    const { rows } = await this.db.query<RunRow & { cursor_at: string }>(
      `SELECT id, next_attempt_at, redelivered_at, next_attempt_at::text AS cursor_at FROM webhook_deliveries
       WHERE status = 'pending' AND enqueued_at IS NOT NULL AND next_attempt_at < clock_timestamp() - make_interval(secs => $1::double precision / 1000)
         AND ($3::timestamptz IS NULL OR (next_attempt_at, id) > ($3::timestamptz, $4::text))
       ORDER BY next_attempt_at, id LIMIT $2`,
      [graceMs, limit, after?.at ?? null, after?.id ?? null],
    );
    const last = rows[rows.length - 1];
    return { runs: rows.map(toRun), next: last ? { at: last.cursor_at, id: last.id } : null };
  }
}

const toRun = (row: RunRow): DeliveryToRun => ({ id: row.id, nextAttemptAt: row.next_attempt_at, redeliveredAt: row.redelivered_at });

/** A row read through `to_jsonb`, whose timestamps are text. */
function jsonDates<Row extends object>(row: Row): Row {
  const dated: Record<string, unknown> = { ...(row as Record<string, unknown>) };
  for (const key of ['previous_secret_until', 'failing_since', 'disabled_at', 'created_at', 'next_attempt_at', 'delivered_at', 'redelivered_at']) {
    if (typeof dated[key] === 'string') dated[key] = new Date(dated[key]);
  }
  return dated as Row;
}

function toEndpoint(row: EndpointRow): WebhookEndpoint {
  return {
    id: row.id,
    userId: row.user_id,
    url: row.url,
    events: row.events,
    description: row.description,
    secret: row.secret,
    previousSecret: row.previous_secret,
    previousSecretUntil: row.previous_secret_until,
    failingSince: row.failing_since,
    disabledAt: row.disabled_at,
    disabledReason: row.disabled_reason,
    createdAt: row.created_at,
  };
}

function toDelivery(row: DeliveryRow): WebhookDelivery {
  return {
    id: row.id,
    endpointId: row.endpoint_id,
    eventId: row.event_id,
    type: row.type,
    payload: row.payload,
    status: row.status,
    attempts: row.attempts,
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    nextAttemptAt: row.next_attempt_at,
    createdAt: row.created_at,
    deliveredAt: row.delivered_at,
    redeliveredAt: row.redelivered_at,
  };
}
