import type { BackoffOptions, Job, JobsOptions, KeepJobs, Queue } from 'bullmq';
import { z } from 'zod';
import { traceparentSchema } from '../tracing/trace-context';
import { toolExecutionsTimeMs, type ToolAttemptLimits } from './tool-retry-policy';

export const TURN_QUEUE = 'turns';
/**
 * Batch items' turn starts, served by slots of their own on each worker (BATCH_TURNS_PER_WORKER),
 * so that a batch never fills the slots interactive turns start in.
 */
export const BATCH_TURN_QUEUE = 'batch-turns';
export const TOOL_QUEUE = 'tools';
export const WEBHOOK_QUEUE = 'webhooks';
export type QueueName = typeof TURN_QUEUE | typeof BATCH_TURN_QUEUE | typeof TOOL_QUEUE | typeof WEBHOOK_QUEUE;

/*
 * Job data is ids only: content lives in PostgreSQL, and BullMQ keeps job data in clear text.
 */

/**
 * A turn's job. `traceparent`: the trace it runs in (the span that admitted the turn).
 * `conversationId`: on a turn's start, whose row lock the admission holds until it commits
 * (a job may be taken before that; see turn-runner.ts).
 */
const turnPayload = z.object({ turnId: z.string().min(1), conversationId: z.string().min(1).optional(), traceparent: traceparentSchema.optional() });

/** One server-run tool call of a turn; `traceparent` names the step span that asked for it. */
const runToolPayload = z.object({
  kind: z.literal('run-tool'),
  turnId: z.string(),
  toolCallId: z.string(),
  traceparent: traceparentSchema.optional(),
  /** A call a person approved: run outside the step's flow, so its settling resumes a parked turn itself. */
  approved: z.literal(true).optional(),
});
const clientTimeoutPayload = z.object({ kind: z.literal('client-timeout'), turnId: z.string(), toolCallId: z.string() });
const approvalTimeoutPayload = z.object({ kind: z.literal('approval-timeout'), turnId: z.string(), toolCallId: z.string() });
const invokePayload = z.object({ kind: z.literal('invoke'), invocationId: z.string() });

/**
 * A webhook delivery's run: `redeliveredAt` (ms) names the run the job is for, the event's (null)
 * or a redeliver's. Jobs added before it existed are the event's run.
 */
const deliverPayload = z.object({ deliveryId: z.string(), redeliveredAt: z.number().nullable().default(null) });

/** What the catalog says of one kind of job. */
interface JobPolicy {
  /** The queues a job of this kind is added to. */
  queues: readonly QueueName[];
  payload: z.ZodType;
  /**
   * Runs BullMQ makes before the job fails for good, spent on Switchyard's own trouble (a store
   * away longer than a run waits for it, a bug): a provider's faults are retried by the turn
   * runner, a tool's by its `retries`, a receiver's by the delivery's schedule, all by delaying
   * the job, which spends none of these.
   */
  attempts: number;
  /** The wait before BullMQ's next run of a failed job; none when it has one attempt. */
  backoff?: BackoffOptions;
  /**
   * The longest the job's runs take, from its first run to its outcome, where that is known in
   * advance (a direct invocation waits for it); null where it is not: a turn runs as many steps as
   * it takes, a timer's run is one write, a delivery follows its endpoint's retry schedule.
   */
  timeoutMs: ((tool: ToolAttemptLimits) => number) | null;
  /** How long BullMQ keeps the job once it completed or failed for good. */
  retention: { completed: boolean | KeepJobs; failed: boolean | KeepJobs };
}

const SWITCHYARD_RETRIES = { attempts: 5, backoff: { type: 'exponential', delay: 1000 } } as const;
const DAY_S = 24 * 3600;
/** A job failed for good stays a week, where the reconciler finds it failed and tells why (job-states.ts). */
const FAILED_KEPT = { age: 7 * DAY_S };

/**
 * Every kind of job Switchyard adds to BullMQ, by job name: its payload, attempts, backoff, time
 * and retention. Producers take their options from here ({@link jobOptions}), workers parse
 * their jobs with it ({@link queuePayloads}).
 */
export const JOB_CATALOG = {
  /**
   * A turn's start. Completed jobs are removed at once: a re-enqueue after that starts a job that
   * finds the turn finished in PostgreSQL and returns. A turn runs as many steps as it takes, each
   * stream bounded by PROVIDER_IDLE_TIMEOUT_MS, so it has no time of its own.
   */
  'run-turn': {
    queues: [TURN_QUEUE, BATCH_TURN_QUEUE],
    payload: turnPayload,
    ...SWITCHYARD_RETRIES,
    timeoutMs: null,
    retention: { completed: true, failed: FAILED_KEPT },
  },
  /** A turn's next step: the parent of a step's tool jobs, or the resume once its last client answer arrived. */
  'continue-turn': {
    queues: [TURN_QUEUE],
    payload: turnPayload,
    ...SWITCHYARD_RETRIES,
    timeoutMs: null,
    retention: { completed: true, failed: FAILED_KEPT },
  },
  /** Executes a server-run tool call of a turn, once per run, as the tool retry policy says. */
  'run-tool': {
    queues: [TOOL_QUEUE],
    payload: runToolPayload,
    ...SWITCHYARD_RETRIES,
    timeoutMs: toolExecutionsTimeMs,
    retention: { completed: true, failed: FAILED_KEPT },
  },
  /**
   * A direct invocation (`POST /v1/tools/:name/invoke`), executed as a turn's call is. Kept an
   * hour once complete, so that a caller waiting for it finds it finished, not gone.
   */
  invoke: {
    queues: [TOOL_QUEUE],
    payload: invokePayload,
    ...SWITCHYARD_RETRIES,
    timeoutMs: toolExecutionsTimeMs,
    retention: { completed: { age: 3600 }, failed: FAILED_KEPT },
  },
  /**
   * Settles a client tool's call that no client answered: a delayed job, due when the call's tool
   * timeout has passed. A run is one write.
   */
  'client-timeout': {
    queues: [TOOL_QUEUE],
    payload: clientTimeoutPayload,
    attempts: 1,
    timeoutMs: null,
    retention: { completed: true, failed: { age: DAY_S } },
  },
  /** Denies a call that waits for approval past its `expiresAt` (`approval_timeout`), when that is due. */
  'approval-timeout': {
    queues: [TOOL_QUEUE],
    payload: approvalTimeoutPayload,
    attempts: 1,
    timeoutMs: null,
    retention: { completed: true, failed: { age: DAY_S } },
  },
  /**
   * One run of a webhook delivery, all its attempts: the job moves itself back to delayed until
   * the attempt webhooks/webhook-delivery.ts decided, each bounded by WEBHOOK_TIMEOUT_MS.
   * Removed once done either way: PostgreSQL keeps the record, and the relay can add a job of
   * the same id again.
   */
  deliver: {
    queues: [WEBHOOK_QUEUE],
    payload: deliverPayload,
    ...SWITCHYARD_RETRIES,
    timeoutMs: null,
    retention: { completed: true, failed: true },
  },
} as const satisfies Record<string, JobPolicy>;

export type JobName = keyof typeof JOB_CATALOG;
/** What a producer writes as a job's data. */
export type JobPayload<Name extends JobName> = z.infer<(typeof JOB_CATALOG)[Name]['payload']>;

/**
 * The payload a worker of each queue parses its jobs with. A tool job's `kind` is its job name,
 * so one worker tells the four apart by their data alone.
 */
export const queuePayloads = {
  [TURN_QUEUE]: turnPayload,
  [BATCH_TURN_QUEUE]: turnPayload,
  [TOOL_QUEUE]: z.discriminatedUnion('kind', [runToolPayload, clientTimeoutPayload, approvalTimeoutPayload, invokePayload]),
  [WEBHOOK_QUEUE]: deliverPayload,
} as const satisfies Record<QueueName, z.ZodType>;

export type QueuePayload<Queue extends QueueName> = z.infer<(typeof queuePayloads)[Queue]>;
export type TurnJobData = QueuePayload<typeof TURN_QUEUE>;
export type ToolJobData = QueuePayload<typeof TOOL_QUEUE>;
export type WebhookJobData = QueuePayload<typeof WEBHOOK_QUEUE>;

/** What one job adds to its kind's policy: its id, and when and in which order it runs. */
export interface JobPlacement {
  jobId: string;
  delay?: number;
  priority?: number;
}

/** BullMQ's options for a job of kind `name`: the catalog's attempts, backoff and retention, and its placement. */
export function jobOptions(name: JobName, placement: JobPlacement): JobsOptions {
  const policy: JobPolicy = JOB_CATALOG[name];
  return {
    attempts: policy.attempts,
    ...(policy.backoff ? { backoff: policy.backoff } : {}),
    removeOnComplete: policy.retention.completed,
    removeOnFail: policy.retention.failed,
    ...placement,
  };
}

/** Adds a job of kind `name` to `queue` (one of the kind's `queues`), its data checked against the kind's payload by type. */
export function addJob<Name extends JobName>(queue: Queue, name: Name, payload: JobPayload<Name>, placement: JobPlacement): Promise<Job> {
  return queue.add(name, payload, jobOptions(name, placement));
}
