import { FlowProducer, Queue, type ConnectionOptions, type Job } from 'bullmq';
import { addJob, jobOptions, TOOL_QUEUE, TURN_QUEUE, type JobPayload } from './job-catalog';
import { turnJobData } from './turn-queue';

export { TOOL_QUEUE } from './job-catalog';

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
export async function fanOutToolCalls(flows: FlowProducer, input: { turnId: string; step: number; calls: ServerToolJob[]; trace?: FanOutTrace }): Promise<void> {
  const toolTrace = input.trace?.tools ? { traceparent: input.trace.tools } : {};
  await flows.add({
    name: 'continue-turn',
    queueName: TURN_QUEUE,
    data: turnJobData(input.turnId, input.trace?.turn),
    opts: jobOptions('continue-turn', { jobId: continuationJobId(input.turnId, input.step) }),
    children: input.calls.map((call) => ({
      name: 'run-tool',
      queueName: TOOL_QUEUE,
      data: { kind: 'run-tool', turnId: input.turnId, toolCallId: call.toolCallId, ...toolTrace } satisfies JobPayload<'run-tool'>,
      opts: { ...jobOptions('run-tool', { jobId: toolJobId(input.turnId, input.step, call.position) }), ignoreDependencyOnFailure: true },
    })),
  });
}

/**
 * Enqueues a direct invocation; its id is the invocation's, so a repeat adds nothing. Called only
 * for an invocation not settled yet: a job of its that failed for good (a store away longer
 * than its attempts, a lock lost too often) is kept for days under that id, so it is run again
 * rather than left to answer every repeat with 503.
 */
export async function enqueueInvocation(queue: Queue, invocationId: string): Promise<Job> {
  const job = await addJob(queue, 'invoke', { kind: 'invoke', invocationId }, { jobId: invocationJobId(invocationId) });
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
  const jobId = (kind === 'client-timeout' ? clientTimeoutJobId : approvalTimeoutJobId)(input.turnId, input.step, input.position);
  await addJob(queue, kind, { kind, turnId: input.turnId, toolCallId: input.toolCallId }, { jobId, delay: Math.max(0, input.delayMs) });
}

/**
 * Runs a call a person approved, as its own job (the step's flow, if it had one, is out
 * already). Its id is the one a flow would give it, so a repeat adds nothing.
 */
export async function enqueueApprovedCall(queue: Queue, input: { turnId: string; step: number; position: number; toolCallId: string; traceparent?: string }): Promise<void> {
  const data: JobPayload<'run-tool'> = {
    kind: 'run-tool',
    turnId: input.turnId,
    toolCallId: input.toolCallId,
    approved: true,
    ...(input.traceparent ? { traceparent: input.traceparent } : {}),
  };
  await addJob(queue, 'run-tool', data, { jobId: toolJobId(input.turnId, input.step, input.position) });
}
