import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { isRetryableKind, PROVIDER_ERROR_KINDS, PROVIDER_REQUEST_STATUSES } from '../providers/provider-error';
import { heapAfterLastMajorGc } from './heap-after-gc';
import { WEBHOOK_EVENT_TYPES } from '../events/webhook-event-types';

/** A database's connections now (PGlite: its one connection and the callers queued for it). */
export interface ConnectionPoolFigures {
  /** The pool's size. */
  max: number;
  busy: number;
  idle: number;
  /** Queries and transactions waiting for a connection. */
  waiting: number;
}

const TURN_STATUSES = ['completed', 'failed', 'cancelled'] as const;
const TOOL_CALL_STATUSES = ['succeeded', 'failed'] as const;
const BATCH_ITEM_ENDS = ['succeeded', 'failed', 'cancelled'] as const;
const TRANSPORTS = ['websocket', 'sse'] as const;
const WEBHOOK_DELIVERY_OUTCOMES = ['delivered', 'failed'] as const;
/** How a webhook attempt went: answered 2xx, answered otherwise, no answer in time, no connection, a URL refused, or not made (an internal error: a secret that cannot be decrypted). */
export const WEBHOOK_ATTEMPT_OUTCOMES = ['success', 'http_error', 'timeout', 'network_error', 'refused', 'unattempted'] as const;
/** The tool label of a name the registry does not know: names from outside never become labels. */
export const OTHER_TOOL = 'other';
/** Queue counts are read from Redis at most this often, however many scrapers ask. */
const QUEUE_COUNTS_MAX_AGE_MS = 1000;

interface WatchedQueue {
  name: string;
  getJobCounts(...states: string[]): Promise<Record<string, number>>;
}

/**
 * Every metric Switchyard exports, in one registry per process (not prom-client's global
 * one, so tests can run several services side by side). Names are the dashboard's contract.
 * Label sets known at start are created at 0, so that a panel shows 0 rather than no data
 * before the first event (Prometheus has no series for a counter never written).
 */
export function createMetrics(options: { now?: () => number } = {}) {
  const now = options.now ?? Date.now;
  const registry = new Registry();
  // Figures owned elsewhere are read at scrape time through these, set once their owner exists.
  // The API's own (websocket clients and subscriptions, batch submissions, pending approvals) are
  // exported only once it gives their reader: a worker exports no zeros of them, which a panel
  // would otherwise have to filter out by job name, and job names are the deployment's to choose.
  let countWebsocketClients = () => 0;
  let countSubscriptions = () => ({ conversation: 0, batch: 0 });
  let countBatchSubmissions = () => 0;
  let countTurnBodyBytes = () => 0;
  let countPendingApprovals: () => Promise<number> = async () => 0;
  const exported = new Set<Gauge<string>>();
  const exportOnce = (gauge: Gauge<string>) => {
    if (exported.has(gauge)) return;
    exported.add(gauge);
    registry.registerMetric(gauge);
  };
  let readDbConnections: () => ConnectionPoolFigures | null = () => null;
  let queues: WatchedQueue[] = [];
  let queueCounts: { at: number; counts: Promise<{ queue: string; counts: Record<string, number> }[]> } | undefined;
  let knownTools = new Set<string>();
  collectDefaultMetrics({ register: registry, prefix: 'switchyard_process_' });

  const httpRequests = new Counter({
    name: 'switchyard_http_requests_total',
    help: 'HTTP requests answered, by route and status',
    labelNames: ['method', 'route', 'status'] as const,
    registers: [registry],
  });
  const turnsStarted = new Counter({
    name: 'switchyard_turns_started_total',
    help: 'Turn attempts started by workers',
    registers: [registry],
  });
  const turnStarts = new Counter({
    name: 'switchyard_turn_starts_total',
    help: 'Turns a process with both roles admitted, by where they started: `local` (in its own turn slots at once, the queued job its lease) or `queue` (its slots were full: enqueued for any worker)',
    labelNames: ['path'] as const,
    registers: [registry],
  });
  const turnsFinished = new Counter({
    name: 'switchyard_turns_finished_total',
    help: 'Turns ended, by final status',
    labelNames: ['status'] as const,
    registers: [registry],
  });
  const turnDuration = new Histogram({
    name: 'switchyard_turn_duration_seconds',
    help: 'From a turn being accepted to its end',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300],
    registers: [registry],
  });
  const turnSteps = new Histogram({
    name: 'switchyard_turn_steps',
    help: 'Completions (steps) a turn took, observed when it ends',
    buckets: [1, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 50],
    registers: [registry],
  });
  const timeToFirstToken = new Histogram({
    name: 'switchyard_time_to_first_token_seconds',
    help: 'From a step starting to its first token from the provider',
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const streamedTokens = new Counter({
    name: 'switchyard_streamed_tokens_total',
    help: 'Output pieces streamed from the provider (about a token each), by kind; counted per step',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const modelTokens = new Counter({
    name: 'switchyard_model_tokens_total',
    help: "Tokens of completed steps as the provider's usage reports them, by kind",
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  // The usage ledger's lines as they are written, once each (usage/metered-ledger.ts). By
  // `provider/model`, never by user: a label per user would grow without bound.
  const ledgerTokens = new Counter({
    name: 'switchyard_ledger_tokens_total',
    help: 'Tokens the usage ledger records (every provider call, discarded attempts and estimated calls included), by provider/model and kind',
    labelNames: ['model', 'kind'] as const,
    registers: [registry],
  });
  const ledgerCost = new Counter({
    name: 'switchyard_ledger_cost_usd_total',
    help: 'USD the usage ledger records (priced calls), by provider/model',
    labelNames: ['model'] as const,
    registers: [registry],
  });
  const providerRequests = new Counter({
    name: 'switchyard_provider_requests_total',
    help: 'Completion requests sent to the provider, by what it answered (an HTTP status class, no_response, or aborted by us)',
    labelNames: ['status'] as const,
    registers: [registry],
  });
  const providerErrors = new Counter({
    name: 'switchyard_provider_errors_total',
    help: 'Failed completion requests, by kind',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const providerRetries = new Counter({
    name: 'switchyard_provider_retries_total',
    help: 'Provider failures retried (the turn waits, then tries again), by kind',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const modelRequests = new Counter({
    name: 'switchyard_model_requests_total',
    help: "Requests steps sent to their model's targets, by provider, model at the provider and outcome (ok, failed before output, discarded after it)",
    labelNames: ['provider', 'model', 'outcome'] as const,
    registers: [registry],
  });
  const providerFallbacks = new Counter({
    name: 'switchyard_provider_fallbacks_total',
    help: "Steps that went on to their model's next target, by what the target they left did",
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  const providerFirstToken = new Histogram({
    name: 'switchyard_provider_first_token_seconds',
    help: "From a request being sent to a provider to its first token, by provider (a step's time to first token counts its fallbacks too)",
    labelNames: ['provider'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  let readCoolingTargets: () => Promise<{ provider: string; model: string; cooling: boolean }[]> = async () => [];
  const targetsCoolingDown = new Gauge({
    name: 'switchyard_model_targets_cooling_down',
    help: 'Whether each target of the models cools down (1) or not (0), as every process shares it in Redis (read at scrape time: take the max across processes)',
    labelNames: ['provider', 'model'] as const,
    registers: [],
    async collect() {
      try {
        for (const target of await readCoolingTargets()) this.set({ provider: target.provider, model: target.model }, target.cooling ? 1 : 0);
      } catch {
        this.reset();
      }
    },
  });
  const toolCalls = new Counter({
    name: 'switchyard_tool_calls_total',
    help: 'Tool calls settled, by tool and final status',
    labelNames: ['tool', 'status'] as const,
    registers: [registry],
  });
  const toolAttempts = new Counter({
    name: 'switchyard_tool_attempts_total',
    help: 'Tool executions (first attempts and retries, of turns and direct invocations), by tool',
    labelNames: ['tool'] as const,
    registers: [registry],
  });
  const toolDuration = new Histogram({
    name: 'switchyard_tool_duration_seconds',
    help: 'One tool execution, by tool',
    labelNames: ['tool'] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  const approvalDecisionTime = new Histogram({
    name: 'switchyard_tool_approval_decision_seconds',
    help: 'From a call asking for approval to its decision, by outcome (approved, denied, timeout)',
    labelNames: ['outcome'] as const,
    buckets: [1, 5, 15, 30, 60, 300, 900, 3600, 4 * 3600, 24 * 3600],
    registers: [registry],
  });
  const approvalsPending = new Gauge({
    name: 'switchyard_tool_approvals_pending',
    help: "Tool calls waiting for a person's approval (read from the database at scrape time, by each API process)",
    registers: [],
    async collect() {
      this.set(await countPendingApprovals());
    },
  });
  const eventRelayLag = new Histogram({
    name: 'switchyard_event_relay_lag_seconds',
    help: 'From an event being appended to the log to this gateway first sending it to a websocket client (live events only, not replays)',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
    registers: [registry],
  });
  const slowConsumerDisconnects = new Counter({
    name: 'switchyard_slow_consumer_disconnects_total',
    help: 'Clients disconnected because their unsent backlog passed WS_MAX_BUFFERED_BYTES, by transport',
    labelNames: ['transport'] as const,
    registers: [registry],
  });
  const batchItemsStarted = new Counter({
    name: 'switchyard_batch_items_started_total',
    help: 'Batch items started (a retried item counts again)',
    registers: [registry],
  });
  const batchItemsEnded = new Counter({
    name: 'switchyard_batch_items_ended_total',
    help: 'Batch items ended, by status',
    labelNames: ['status'] as const,
    registers: [registry],
  });
  const dbQueryDuration = new Histogram({
    name: 'switchyard_db_query_duration_seconds',
    help: 'One database query (inside transactions too), from the call to its answer',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10],
    registers: [registry],
  });

  // Watching the collections starts now, not at the first scrape.
  heapAfterLastMajorGc();
  new Gauge({
    name: 'switchyard_heap_after_major_gc_bytes',
    help: 'V8 heap in use right after the last major collection (what survives GC: a steady rise is a leak)',
    registers: [registry],
    collect() {
      this.set(heapAfterLastMajorGc());
    },
  });
  const websocketClients = new Gauge({
    name: 'switchyard_websocket_clients',
    help: 'Open websocket connections on this gateway',
    registers: [],
    collect() {
      this.set(countWebsocketClients());
    },
  });
  const webhookDeliveries = new Counter({
    name: 'switchyard_webhook_deliveries_total',
    help: 'Webhook deliveries settled, by event type and outcome (delivered, or failed for good)',
    labelNames: ['event', 'outcome'] as const,
    registers: [registry],
  });
  const webhookAttempts = new Counter({
    name: 'switchyard_webhook_attempts_total',
    help: 'Webhook delivery attempts, by outcome',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const webhookAttemptsDeferred = new Counter({
    name: 'switchyard_webhook_attempts_deferred_total',
    help: 'Webhook delivery attempts not made because their endpoint already had WEBHOOK_MAX_IN_FLIGHT_PER_ENDPOINT in flight in this process (the job looks again shortly)',
    registers: [registry],
  });
  const webhookLag = new Histogram({
    name: 'switchyard_webhook_delivery_lag_seconds',
    help: 'From a webhook event being recorded (the end it reports committed), or from its redeliver, to its delivery',
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600, 86400],
    registers: [registry],
  });
  const websocketSubscriptions = new Gauge({
    name: 'switchyard_websocket_subscriptions',
    help: 'Subscriptions of the open websocket connections on this gateway, by kind',
    labelNames: ['kind'] as const,
    registers: [],
    collect() {
      const counts = countSubscriptions();
      this.set({ kind: 'conversation' }, counts.conversation);
      this.set({ kind: 'batch' }, counts.batch);
    },
  });
  const batchSubmissionsInFlight = new Gauge({
    name: 'switchyard_batch_submissions_in_flight',
    help: 'Batch submissions this API process is reading now (at most MAX_BATCH_SUBMISSIONS_IN_FLIGHT)',
    registers: [],
    collect() {
      this.set(countBatchSubmissions());
    },
  });
  new Gauge({
    name: 'switchyard_turn_body_bytes_in_flight',
    help: 'Bytes of POST /openai/v1/responses and POST /api/chat bodies this API process is reading and storing now, by their declared length (at most MAX_TURN_BODY_BYTES_IN_FLIGHT)',
    registers: [registry],
    collect() {
      this.set(countTurnBodyBytes());
    },
  });
  new Gauge({
    name: 'switchyard_db_connections',
    help: "This process's database connections, by state (busy, idle, max: the pool's size)",
    labelNames: ['state'] as const,
    registers: [registry],
    collect() {
      const figures = readDbConnections();
      if (!figures) return;
      this.set({ state: 'busy' }, figures.busy);
      this.set({ state: 'idle' }, figures.idle);
      this.set({ state: 'max' }, figures.max);
    },
  });
  new Gauge({
    name: 'switchyard_db_waiting_clients',
    help: 'Queries and transactions of this process waiting for a database connection',
    registers: [registry],
    collect() {
      const figures = readDbConnections();
      if (figures) this.set(figures.waiting);
    },
  });
  const dbListenerConnected = new Gauge({
    name: 'switchyard_db_listener_connected',
    help: "1 while this process's listening database connection listens, 0 while it is down and opened again, by what it listens for",
    labelNames: ['listener'] as const,
    registers: [registry],
  });
  const dbListenerLosses = new Counter({
    name: 'switchyard_db_listener_losses_total',
    help: 'Times the listening database connection dropped or could not open (once per outage), by what it listens for',
    labelNames: ['listener'] as const,
    registers: [registry],
  });
  new Gauge({
    name: 'switchyard_queue_jobs',
    help: 'Jobs in the turn, tool and webhook queues, by state (read from Redis at scrape time, at most once a second)',
    labelNames: ['queue', 'state'] as const,
    registers: [registry],
    async collect() {
      const at = now();
      if (!queueCounts || at - queueCounts.at >= QUEUE_COUNTS_MAX_AGE_MS) {
        const counts = Promise.all(
          queues.map(async (queue) => ({
            queue: queue.name,
            counts: await queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed', 'waiting-children', 'failed'),
          })),
        );
        queueCounts = { at, counts };
      }
      try {
        for (const { queue, counts } of await queueCounts.counts) {
          for (const [state, count] of Object.entries(counts)) this.set({ queue, state }, count);
        }
      } catch {
        // Redis does not answer: no figure rather than a stale one, and the rest of the page
        // is still served (an outage is when the other figures matter most).
        this.reset();
        queueCounts = undefined;
      }
    },
  });

  for (const status of TURN_STATUSES) turnsFinished.inc({ status }, 0);
  for (const kind of ['text', 'reasoning', 'tool_call'] as const) streamedTokens.inc({ kind }, 0);
  for (const kind of ['prompt', 'completion'] as const) modelTokens.inc({ kind }, 0);
  for (const status of PROVIDER_REQUEST_STATUSES) providerRequests.inc({ status }, 0);
  for (const kind of PROVIDER_ERROR_KINDS) {
    providerErrors.inc({ kind }, 0);
    if (isRetryableKind(kind)) providerRetries.inc({ kind }, 0);
    if (isRetryableKind(kind) || kind === 'context_length_exceeded') providerFallbacks.inc({ reason: kind }, 0);
  }
  for (const transport of TRANSPORTS) slowConsumerDisconnects.inc({ transport }, 0);
  for (const status of BATCH_ITEM_ENDS) batchItemsEnded.inc({ status }, 0);
  for (const outcome of ['approved', 'denied', 'timeout']) approvalDecisionTime.zero({ outcome });
  for (const event of WEBHOOK_EVENT_TYPES) for (const outcome of WEBHOOK_DELIVERY_OUTCOMES) webhookDeliveries.inc({ event, outcome }, 0);
  for (const outcome of WEBHOOK_ATTEMPT_OUTCOMES) webhookAttempts.inc({ outcome }, 0);

  return {
    registry,
    httpRequests,
    turnsStarted,
    turnStarts,
    turnsFinished,
    turnDuration,
    turnSteps,
    timeToFirstToken,
    streamedTokens,
    modelTokens,
    ledgerTokens,
    ledgerCost,
    providerRequests,
    providerErrors,
    providerRetries,
    modelRequests,
    providerFallbacks,
    providerFirstToken,
    toolCalls,
    toolAttempts,
    toolDuration,
    eventRelayLag,
    slowConsumerDisconnects,
    batchItemsStarted,
    batchItemsEnded,
    dbQueryDuration,
    dbListenerConnected,
    dbListenerLosses,
    approvalDecisionTime,
    webhookDeliveries,
    webhookAttempts,
    webhookAttemptsDeferred,
    webhookLag,
    /**
     * The tools this process runs: their names become label values (anything else is
     * {@link OTHER_TOOL}), each created at 0.
     */
    registerTools(names: readonly string[]) {
      knownTools = new Set(names);
      for (const tool of [...knownTools, OTHER_TOOL]) {
        toolAttempts.inc({ tool }, 0);
        toolDuration.zero({ tool });
        for (const status of TOOL_CALL_STATUSES) toolCalls.inc({ tool, status }, 0);
      }
    },
    /** A tool's label: its name when registered, else {@link OTHER_TOOL} (labels stay bounded). */
    toolLabel(name: string): string {
      return knownTools.has(name) ? name : OTHER_TOOL;
    },
    countWebsocketClientsWith(counter: () => number) {
      countWebsocketClients = counter;
      exportOnce(websocketClients);
    },
    countSubscriptionsWith(counter: () => { conversation: number; batch: number }) {
      countSubscriptions = counter;
      exportOnce(websocketSubscriptions);
    },
    countBatchSubmissionsWith(counter: () => number) {
      countBatchSubmissions = counter;
      exportOnce(batchSubmissionsInFlight);
    },
    countTurnBodyBytesWith(counter: () => number) {
      countTurnBodyBytes = counter;
    },
    /** The models' targets, each with whether it cools down now (GET /v1/models's states). */
    readCoolingTargetsWith(reader: () => Promise<{ provider: string; model: string; cooling: boolean }[]>) {
      readCoolingTargets = reader;
      exportOnce(targetsCoolingDown);
    },
    countPendingApprovalsWith(counter: () => Promise<number>) {
      countPendingApprovals = counter;
      exportOnce(approvalsPending);
    },
    readDbConnectionsWith(reader: () => ConnectionPoolFigures) {
      readDbConnections = reader;
    },
    watchQueues(watched: WatchedQueue[]) {
      queues = watched;
      queueCounts = undefined;
    },
  };
}

export type Metrics = ReturnType<typeof createMetrics>;
