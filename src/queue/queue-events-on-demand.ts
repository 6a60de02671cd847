import { QueueEvents, type Queue } from 'bullmq';
import type { RedisClient } from '../redis/redis-connection';

/** A started QueueEvents and how to stop it (its connection included). */
export interface OpenQueueEvents {
  events: QueueEvents;
  close(): Promise<void>;
}

export interface QueueEventsOnDemandOptions {
  /** The id of the newest entry of the queue's event stream ('0' when it has none). */
  lastEventId(): Promise<string>;
  /** Starts a QueueEvents that reads the stream after `lastEventId`. */
  open(lastEventId: string): OpenQueueEvents;
  /** How long a reader nobody uses is kept, so that back-to-back waits share it. */
  idleMs: number;
}

/**
 * BullMQ's QueueEvents reads every event of its queue, several per job. A process that waits
 * for a job now and then (a direct tool invocation) would otherwise parse each tool job's
 * events all the time: the reader runs only while someone waits, and `idleMs` after.
 *
 * A reader started late misses nothing a waiter needs: it reads from the stream's newest entry
 * at its start, and `Job.waitUntilFinished` looks at the job's state once its reader is
 * listening, so a job that finished before the reader began is found finished.
 */
export class QueueEventsOnDemand {
  private reader: Promise<OpenQueueEvents> | null = null;
  private users = 0;
  private idleTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: QueueEventsOnDemandOptions) {}

  /** Runs `wait` with a listening reader; the reader is released when it settles. */
  async use<T>(wait: (events: QueueEvents) => Promise<T>): Promise<T> {
    this.users++;
    clearTimeout(this.idleTimer);
    try {
      this.reader ??= this.start();
      const { events } = await this.reader;
      return await wait(events);
    } finally {
      if (--this.users === 0) this.idleTimer = setTimeout(() => void this.stop(), this.options.idleMs).unref();
    }
  }

  /** Whether a reader is running or starting (for tests and metrics). */
  get running(): boolean {
    return this.reader !== null;
  }

  async close(): Promise<void> {
    clearTimeout(this.idleTimer);
    await this.stop();
  }

  private async start(): Promise<OpenQueueEvents> {
    try {
      const opened = this.options.open(await this.options.lastEventId());
      await opened.events.waitUntilReady();
      return opened;
    } catch (error) {
      // The next waiter tries again.
      this.reader = null;
      throw error;
    }
  }

  private async stop(): Promise<void> {
    const reader = this.reader;
    if (!reader || this.users > 0) return;
    this.reader = null;
    await (await reader.catch(() => null))?.close();
  }
}

/**
 * How to read `queue`'s events from its newest entry on. `connect` makes the reader's
 * connection (it blocks on it, so it is its own); `redis` reads the stream's newest entry.
 */
export function queueEventsReader(
  queue: Queue,
  options: { redis: RedisClient; connect(): RedisClient; onError(error: Error): void },
): Pick<QueueEventsOnDemandOptions, 'lastEventId' | 'open'> {
  return {
    lastEventId: async () => (await options.redis.xrevrange(queue.keys.events!, '+', '-', 'COUNT', 1))[0]?.[0] ?? '0',
    open: (lastEventId) => {
      const connection = options.connect();
      const events = new QueueEvents(queue.name, { connection, prefix: queue.opts.prefix, lastEventId });
      events.on('error', options.onError);
      return { events, close: () => events.close().finally(() => connection.disconnect()) };
    },
  };
}
