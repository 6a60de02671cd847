import { once } from 'node:events';
import { Queue, Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { QueueEventsOnDemand, queueEventsReader } from '../../../src/queue/queue-events-on-demand';
import { uniqueSuffix } from '../../support/ids';
import { dropRedisPrefix, TEST_REDIS_URL } from '../../support/services';

/** An API process reads the tool queue's events only while an invocation waits for its job. */
describe('queue events on demand', () => {
  const prefix = `t-qe-${uniqueSuffix()}`;
  const redis = new Redis(TEST_REDIS_URL);
  const workerConnection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
  /** The readers' connections. */
  const connections: Redis[] = [];
  let queue: Queue;
  let worker: Worker;
  let onDemand: QueueEventsOnDemand;
  /** Resolved as each reader closes, in order. */
  let readerClosed: Promise<void>;
  let closeReader = () => {};
  /** The job may finish only once this settles (per job id). */
  const holds = new Map<string, Promise<void>>();

  beforeAll(async () => {
    queue = new Queue('jobs', { connection: redis, prefix });
    worker = new Worker('jobs', async (job: Job) => (await holds.get(job.id!), `done ${job.id}`), {
      connection: workerConnection,
      prefix,
    });
    await worker.waitUntilReady();
    const reader = queueEventsReader(queue, {
      redis,
      connect: () => {
        const connection = new Redis(TEST_REDIS_URL, { maxRetriesPerRequest: null });
        connections.push(connection);
        return connection;
      },
      onError: () => undefined,
    });
    onDemand = new QueueEventsOnDemand({
      idleMs: 0,
      lastEventId: reader.lastEventId,
      open: (lastEventId) => {
        const opened = reader.open(lastEventId);
        readerClosed = new Promise((resolve) => (closeReader = resolve));
        return { events: opened.events, close: () => opened.close().finally(closeReader) };
      },
    });
  });
  afterAll(async () => {
    await onDemand.close();
    await worker.close();
    await queue.close();
    await dropRedisPrefix(prefix);
    redis.disconnect();
    workerConnection.disconnect();
  });

  const held = (jobId: string) => {
    let release = () => {};
    holds.set(jobId, new Promise((resolve) => (release = resolve)));
    return release;
  };

  it('reads no events while nobody waits, and stops once the last waiter is done', async () => {
    expect(onDemand.running).toBe(false);
    const release = held('a');
    const job = await queue.add('a', {}, { jobId: 'a' });
    const waited = onDemand.use((events) => job.waitUntilFinished(events));
    const shared = onDemand.use(async () => onDemand.running);
    expect(await shared).toBe(true);
    release();
    expect(await waited).toBe('done a');
    await readerClosed;
    expect(onDemand.running).toBe(false);
    await Promise.all(connections.map((connection) => connection.status === 'end' || once(connection, 'end')));
  });

  it('finds a job that finished before its reader started, and one that finishes after it started', async () => {
    const finished = new Promise((resolve) => worker.once('completed', resolve));
    const early = await queue.add('b', {}, { jobId: 'b' });
    await finished;
    expect(await onDemand.use((events) => early.waitUntilFinished(events))).toBe('done b');
    await readerClosed;

    // The newest entry of the stream is where a new reader starts: the completion comes after it.
    const release = held('c');
    const late = await queue.add('c', {}, { jobId: 'c' });
    const waited = onDemand.use((events) => late.waitUntilFinished(events));
    await onDemand.use(async () => undefined);
    release();
    expect(await waited).toBe('done c');
  });
});
