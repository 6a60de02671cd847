import { once } from 'node:events';
import { Queue, type Job, type Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { addJob, TOOL_QUEUE, WEBHOOK_QUEUE } from '../../../src/queue/job-catalog';
import { createJobWorker } from '../../../src/queue/job-worker';
import { enqueueDelivery } from '../../../src/queue/webhook-queue';
import { uniqueSuffix } from '../../support/ids';
import { dropRedisPrefix, TEST_REDIS_URL } from '../../support/services';

/** A worker of a catalog queue hands its handler the job's payload parsed, and fails for good a job that does not parse. */
describe('a job worker of the catalog', () => {
  const prefix = `t-jw-${uniqueSuffix()}`;
  const redis = new Redis(TEST_REDIS_URL);
  const workerConnection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  const settings = { connection: workerConnection, prefix, concurrency: 1, lockDurationMs: 10_000, stalledIntervalMs: 5_000, maxStalledCount: 1 };
  const queues: Queue[] = [];
  const workers: Worker[] = [];
  const queueOf = (name: string) => {
    const queue = new Queue(name, { connection: redis, prefix });
    queues.push(queue);
    return queue;
  };

  afterAll(async () => {
    await Promise.all(workers.map((worker) => worker.close()));
    await Promise.all(queues.map((queue) => queue.close()));
    await dropRedisPrefix(prefix);
    redis.disconnect();
    workerConnection.disconnect();
  });

  it("gives the handler a delivery's payload with its defaults, as the catalog parses it", async () => {
    const queue = queueOf(WEBHOOK_QUEUE);
    const handled: unknown[] = [];
    const worker = createJobWorker(WEBHOOK_QUEUE, settings, async (_job, run) => void handled.push(run));
    workers.push(worker);
    const completed = once(worker, 'completed');
    // A job as one added before runs were named: no redeliveredAt.
    await queue.add('deliver', { deliveryId: 'd1' }, { jobId: 'd1' });
    await completed;
    expect(handled).toEqual([{ deliveryId: 'd1', redeliveredAt: null }]);

    const again = once(worker, 'completed');
    await enqueueDelivery(queue, { id: 'd2', redeliveredAt: new Date(1_700_000_000_000) });
    await again;
    expect(handled[1]).toEqual({ deliveryId: 'd2', redeliveredAt: 1_700_000_000_000 });
  });

  it('fails a job whose data does not parse at once, malformed_job, without running its handler or another attempt', async () => {
    const queue = queueOf(TOOL_QUEUE);
    let handled = 0;
    const worker = createJobWorker(TOOL_QUEUE, settings, async () => void handled++);
    workers.push(worker);
    const failed = once(worker, 'failed') as Promise<[Job, Error]>;
    // With attempts to spare, a job that does not parse is still not run again.
    await queue.add('run-tool', { kind: 'run-tool', turnId: 't1' }, { jobId: 'bad', attempts: 5, backoff: { type: 'fixed', delay: 0 } });
    const [job, error] = await failed;
    expect(error.message).toMatch(/^malformed_job: /);
    expect(await queue.getJobState(job.id!)).toBe('failed');
    expect(job.attemptsMade).toBe(1);
    expect(handled).toBe(0);

    const completed = once(worker, 'completed');
    await addJob(queue, 'invoke', { kind: 'invoke', invocationId: 'inv_1' }, { jobId: 'good' });
    await completed;
    expect(handled).toBe(1);
  });
});
