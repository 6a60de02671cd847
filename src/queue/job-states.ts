import type { Queue } from 'bullmq';
import type { RedisClient } from '../redis/redis-connection';

/** What the reconciler needs to know of a job: whether something will still run it. */
export type ObservedJobState = 'live' | 'failed' | 'completed' | 'unknown';

export interface ObservedJob {
  id: string;
  state: ObservedJobState;
  failedReason?: string;
}

/**
 * The states of many jobs in one round trip (a pipeline of two reads per job) instead of a
 * `getJobState` script per job. A job's hash exists until the job is removed, and has
 * `finishedOn` once it completed or failed for good (a retry clears it), so: no hash is
 * `unknown`, no `finishedOn` is `live` (waiting, delayed, active, waiting for children), and a
 * finished job is `failed` if it is in the queue's failed set. Keys come from BullMQ's `toKey`.
 * On a cluster every key read here carries the queues' hash tag (queue-prefix.ts), so the
 * pipeline goes to one node, as ioredis requires of a cluster pipeline.
 */
export async function observeJobs(redis: RedisClient, refs: { queue: Queue; id: string }[]): Promise<ObservedJob[]> {
  if (refs.length === 0) return [];
  const pipeline = redis.pipeline();
  for (const { queue, id } of refs) {
    pipeline.hmget(queue.toKey(id), 'timestamp', 'finishedOn', 'failedReason');
    pipeline.zscore(queue.toKey('failed'), id);
  }
  const replies = (await pipeline.exec()) ?? [];
  return refs.map(({ id }, index) => {
    const [hashError, hash] = replies[index * 2]!;
    const [failedError, failedScore] = replies[index * 2 + 1]!;
    if (hashError) throw hashError;
    if (failedError) throw failedError;
    const [timestamp, finishedOn, failedReason] = hash as (string | null)[];
    if (timestamp === null) return { id, state: 'unknown' };
    if (finishedOn === null) return { id, state: 'live' };
    if (failedScore === null) return { id, state: 'completed' };
    return { id, state: 'failed', ...(failedReason ? { failedReason } : {}) };
  });
}
