import { FlowProducer, Worker } from 'bullmq';
import { connectRedis, dropRedisKeys } from './backing-services';
import { now } from './clock';

export interface RawFlow {
  /** Adds one flow (a parent with `children` children) and resolves with flow.add → the parent's processor starting, in ms. */
  run(children: number): Promise<number>;
  /** Closes the workers and drops the flows' keys. */
  close(): Promise<void>;
}

/**
 * What Switchyard's tool fan-out is built on, with nothing else: a FlowProducer parent with
 * children whose worker returns at once, parent and children on two queues, workers
 * (concurrency 50) in the bench process, removeOnComplete on every job.
 */
export async function startRawFlow(prefix: string): Promise<RawFlow> {
  const connection = connectRedis();
  const flows = new FlowProducer({ connection, prefix });
  const waiting = new Map<string, () => void>();
  const childWorker = new Worker('bench-children', async () => 'ok', { connection, prefix, concurrency: 50 });
  const parentWorker = new Worker(
    'bench-parents',
    async (job) => {
      waiting.get(job.id!)?.();
      return 'ok';
    },
    { connection, prefix, concurrency: 50 },
  );
  await Promise.all([childWorker.waitUntilReady(), parentWorker.waitUntilReady()]);
  let counter = 0;
  return {
    async run(children) {
      const flowId = counter++;
      const parentId = `parent-${flowId}`;
      const started = new Promise<void>((resolve) => waiting.set(parentId, resolve));
      const startedAt = now();
      await flows.add({
        name: 'parent',
        queueName: 'bench-parents',
        opts: { jobId: parentId, removeOnComplete: true },
        children: Array.from({ length: children }, (_unused, position) => ({
          name: 'child',
          queueName: 'bench-children',
          data: { position },
          opts: { jobId: `child-${flowId}-${position}`, removeOnComplete: true },
        })),
      });
      await started;
      waiting.delete(parentId);
      return now() - startedAt;
    },
    async close() {
      await Promise.all([childWorker.close(), parentWorker.close()]);
      await flows.close();
      await dropRedisKeys(connection, `${prefix}:`);
      connection.disconnect();
    },
  };
}
