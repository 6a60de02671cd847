import { FlowProducer, Queue, type ConnectionOptions, type Job, type JobsOptions } from 'bullmq';
import { z } from 'zod';
import { traceparentSchema } from '../tracing/trace-context';
import { TURN_QUEUE, TURN_JOB_OPTIONS, turnJobData } from './turn-queue';

export const TOOL_QUEUE = 'tools';

/** Job data is ids only; arguments and results live in PostgreSQL. */
export const toolJobSchema = z.discriminatedUnion('kind', [
  /** Executes one server-run tool call of a turn; `traceparent` names the step span that asked for it. */
  z.object({
    kind: z.literal('run-tool'),
    turnId: z.string(),
    toolCallId: z.string(),
    traceparent: traceparentSchema.optional(),
    /** A call a person approved: run outside the step's flow, so its settling resumes a parked turn itself. */
    approved: z.literal(true).optional(),
  }),
  /** Settles a client tool call that was never answered. */
  z.object({ kind: z.literal('client-timeout'), turnId: z.string(), toolCallId: z.string() }),
  /** Denies a call that waits for approval past its `expiresAt` (`approval_timeout`). */
  z.object({ kind: z.literal('approval-timeout'), turnId: z.string(), toolCallId: z.string() }),
  /** Runs a direct invocation (`POST /v1/tools/:name/invoke`). */
  z.object({ kind: z.literal('invoke'), invocationId: z.string() }),
]);
export type ToolJobData = z.infer<typeof toolJobSchema>;

/** BullMQ job ids may not contain ':'; provider call ids are not ours to trust, positions are. */
export const toolJobId = (turnId: string, step: number, position: number) => `tool-${turnId}-s${step}-${position}`;
export const clientTimeoutJobId = (turnId: string, step: number, position: number) => `tool-timeout-${turnId}-s${step}-${position}`;
/** The continuation that runs when a step's tool jobs have all settled (the flow's parent). */
export const continuationJobId = (turnId: string, step: number) => `turn-${turnId}-s${step}`;
export const approvalTimeoutJobId = (turnId: string, step: number, position: number) => `tool-approval-timeout-${turnId}-s${step}-${position}`;
export const invocationJobId = (invocationId: string) => `invoke-${invocationId}`;

export interface ServerToolJob {
  toolCallId: string;
  position: number;
}

/**
 * A tool job's attempts are Switchyard's, not the tool's: spent when a store stays away longer
 * than a runner waits (or a bug). A tool's own `retries` are counted on its call (tool-job-runner).
 */
const TOOL_JOB_ATTEMPTS = 5;

export function createToolQueue(connection: ConnectionOptions, prefix: string): Queue {
  return new Queue(TOOL_QUEUE, { connection, prefix });
}

/** Where a fan-out's jobs join the turn's trace. */
export interface FanOutTrace {
  /** The turn's trace (its admission span): the continuation runs in it like the turn's first job. */
  turn?: string | null;
  /** The span that asked for the calls (the step's chat span): each tool job is its child. */
  tools?: string;
}

/**
 * Fans a step's server-run tool calls out as a BullMQ flow: one child job per call, and the
 * turn's continuation as the parent, which BullMQ starts once every child has finished.
 * `ignoreDependencyOnFailure`: a child that failed for good must not hold the parent forever
 * (the child stores its error result itself before it fails).
 */
export async function fanOutToolCalls(
  flows: FlowProducer,
  input: { turnId: string; step: number; calls: ServerToolJob[]; trace?: FanOutTrace },
): Promise<void> {
  const toolTrace = input.trace?.tools ? { traceparent: input.trace.tools } : {};
  await flows.add({
    name: 'continue-turn',
    queueName: TURN_QUEUE,
    data: turnJobData(input.turnId, input.trace?.turn),
    opts: { ...TURN_JOB_OPTIONS, jobId: continuationJobId(input.turnId, input.step) },
    children: input.calls.map((call) => ({
      name: 'run-tool',
      queueName: TOOL_QUEUE,
      data: { kind: 'run-tool', turnId: input.turnId, toolCallId: call.toolCallId, ...toolTrace } satisfies ToolJobData,
      opts: toolJobOptions(input.turnId, input.step, call),
    })),
  });
}

function toolJobOptions(turnId: string, step: number, call: ServerToolJob): JobsOptions {
  return {
    jobId: toolJobId(turnId, step, call.position),
    attempts: TOOL_JOB_ATTEMPTS,
    backoff: { type: 'exponential', delay: 1000 },
    ignoreDependencyOnFailure: true,
    removeOnComplete: true,
    removeOnFail: { age: 7 * 24 * 3600 },
  };
}

/**
 * Enqueues a direct invocation; its id is the invocation's, so a repeat adds nothing. Kept an
 * hour once complete, so that a caller waiting for it finds it finished, not gone. Called only
 * for an invocation not settled yet: a job of its that failed for good (a store away longer
 * than its attempts, a lock lost too often) is kept for days under that id, so it is run again
 * rather than left to answer every repeat with 503.
 */
export async function enqueueInvocation(queue: Queue, invocationId: string): Promise<Job> {
  const data: ToolJobData = { kind: 'invoke', invocationId };
  const job = await queue.add('invoke', data, {
    jobId: invocationJobId(invocationId),
    attempts: TOOL_JOB_ATTEMPTS,
    backoff: { type: 'exponential', delay: 1000 },
    removeOnComplete: { age: 3600 },
    removeOnFail: { age: 7 * 24 * 3600 },
  });
  if ((await job.getState()) === 'failed') {
    // A concurrent repeat may have moved it first: then it is no longer failed, which is the point.
    await job.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true }).catch(() => undefined);
  }
  return job;
}

/**
 * The delayed job that settles a call nobody answered (`client-timeout`: no client did) or
 * decided (`approval-timeout`: no person did) in time. Its id is the call's: armed again, it is not added twice.
 */
export async function scheduleCallTimeout(
  queue: Queue,
  kind: 'client-timeout' | 'approval-timeout',
  input: { turnId: string; step: number; position: number; toolCallId: string; delayMs: number },
): Promise<void> {
  const data: ToolJobData = { kind, turnId: input.turnId, toolCallId: input.toolCallId };
  const jobId = (kind === 'client-timeout' ? clientTimeoutJobId : approvalTimeoutJobId)(input.turnId, input.step, input.position);
  await queue.add(kind, data, { jobId, delay: Math.max(0, input.delayMs), removeOnComplete: true, removeOnFail: { age: 24 * 3600 } });
}

/**
 * Runs a call a person approved, as its own job (the step's flow, if it had one, is out
 * already). Its id is the one a flow would give it, so a repeat adds nothing.
 */
export async function enqueueApprovedCall(
  queue: Queue,
  input: { turnId: string; step: number; position: number; toolCallId: string; traceparent?: string },
): Promise<void> {
  const data: ToolJobData = {
    kind: 'run-tool',
    turnId: input.turnId,
    toolCallId: input.toolCallId,
    approved: true,
    ...(input.traceparent ? { traceparent: input.traceparent } : {}),
  };
  await queue.add('run-tool', data, { ...toolJobOptions(input.turnId, input.step, input), ignoreDependencyOnFailure: undefined });
}
