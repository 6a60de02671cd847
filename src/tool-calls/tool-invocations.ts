import { createHash, randomUUID } from 'node:crypto';
import type { Queue } from 'bullmq';
import type { QueueEventsOnDemand } from '../queue/queue-events-on-demand';
import { AppError } from '../errors/app-error';
import { enqueueInvocation } from '../queue/tool-queue';
import type { ToolInvocation, ToolInvocationsRepository } from '../store/tool-invocations-repository';
import type { ToolDescriptor } from '../tools/tool';
import { invocationWaitMs } from './invocation-wait';

export interface ToolInvocationDeps {
  invocations: ToolInvocationsRepository;
  toolQueue: Queue;
  /** The tool queue's events, read while an invocation's job is waited for. */
  toolEvents: Pick<QueueEventsOnDemand, 'use'>;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

/** An invocation's id: derived from (user, Idempotency-Key) when there is a key, so a repeat finds it. */
export const invocationIdFor = (userId: string, idempotencyKey: string | undefined) =>
  idempotencyKey ? `inv_${sha256(`${userId}\n${idempotencyKey}`).slice(0, 32)}` : `inv_${randomUUID()}`;

/**
 * `POST /v1/tools/:name/invoke`: records the invocation, runs it as a tool job on the workers
 * (the same attempts, retries, timeouts and outage rules as a turn's calls) and waits for its
 * outcome. With an Idempotency-Key the invocation's id is derived from (user, key): a repeat
 * finds the same invocation and gets its stored outcome (or waits for it), never a second run;
 * the same key with another tool or other params is a 409. Null when it has not finished
 * within the tool's time budget (the caller asks again with the same key).
 */
export async function invokeTool(
  deps: ToolInvocationDeps,
  input: { userId: string; tool: ToolDescriptor; params: unknown; idempotencyKey: string | undefined },
): Promise<ToolInvocation | null> {
  const id = invocationIdFor(input.userId, input.idempotencyKey);
  const requestHash = sha256(JSON.stringify({ tool: input.tool.name, params: input.params }));
  const invocation = await deps.invocations.createOrGet({
    id,
    userId: input.userId,
    toolName: input.tool.name,
    params: input.params,
    idempotencyKey: input.idempotencyKey ?? null,
    requestHash,
  });
  if (invocation.requestHash !== requestHash) {
    throw new AppError('idempotency_conflict', 'this Idempotency-Key was used for another invocation (another tool or other params)');
  }
  if (isSettled(invocation)) return invocation;
  const job = await enqueueInvocation(deps.toolQueue, id);
  // A job that failed for good (a store away too long) or took longer: what the database says.
  await deps.toolEvents.use((events) => job.waitUntilFinished(events, invocationWaitMs(input.tool))).catch(() => undefined);
  const settled = await deps.invocations.get(id);
  return settled && isSettled(settled) ? settled : null;
}

const isSettled = (invocation: ToolInvocation) => invocation.status === 'succeeded' || invocation.status === 'failed';
