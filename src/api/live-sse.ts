import type { Response } from 'express';
import type { OpenConnections } from '../auth/open-connections';
import type { EventPage } from '../event-log/event-log';
import { replayPage } from '../subscriptions/replay-page';

/**
 * What the live server-sent-event routes share: heartbeats while idle, and an end that comes
 * once, whether the reader went away, its key was revoked, the process shuts down, or the
 * route is done. `open` holds the streams of one route, for ending them all at shutdown.
 */
export class LiveSse {
  private ended = false;
  private readonly cleanups: (() => void)[] = [];

  constructor(
    private readonly res: Response,
    options: {
      keyId: string;
      connections: OpenConnections;
      heartbeatMs: number;
      /** A reader holding this much unsent that took nothing since the last heartbeat is cut off. */
      maxBufferedBytes: number;
      onSlowReader?: () => void;
      open: Set<LiveSse>;
      /** The last words to a reader whose key was revoked. */
      revoked(reason: string): string;
    },
  ) {
    // Events are not the only clock: a reader that stopped reading while nothing happens (a turn
    // held on a slow step, a replay waiting for drain) would otherwise hold its backlog for ever.
    // The backlog shrinks as the kernel takes it: one that has not, between two beats, is a stall.
    let backlogAtLastBeat = Infinity;
    const heartbeat = setInterval(() => {
      const backlog = res.writableLength;
      if (backlog >= options.maxBufferedBytes && backlog >= backlogAtLastBeat) {
        options.onSlowReader?.();
        return this.end();
      }
      res.write(': keep-alive\n\n');
      backlogAtLastBeat = res.writableLength;
    }, options.heartbeatMs);
    const unregister = options.connections.add(options.keyId, (reason) => this.end(options.revoked(reason)));
    options.open.add(this);
    this.cleanups.push(
      () => clearInterval(heartbeat),
      unregister,
      () => options.open.delete(this),
    );
    // The response's close, not the request's: a request whose body was read closes early.
    res.on('close', () => this.end());
  }

  get isEnded(): boolean {
    return this.ended;
  }

  /** Runs `cleanup` when the stream ends (at once if it has); returns its removal. */
  onEnd(cleanup: () => void): () => void {
    if (this.ended) {
      cleanup();
      return () => undefined;
    }
    this.cleanups.push(cleanup);
    return () => {
      const index = this.cleanups.indexOf(cleanup);
      if (index >= 0) this.cleanups.splice(index, 1);
    };
  }

  end(last = ''): void {
    if (this.ended) return;
    this.ended = true;
    for (const cleanup of this.cleanups) cleanup();
    this.res.end(last);
  }
}

export interface LiveSseOptions {
  connections: OpenConnections;
  heartbeatMs?: number;
  maxBufferedBytes?: number;
  /** A reader was cut off for falling too far behind (counted). */
  onSlowReader?: () => void;
}

/** One route's live streams: their shared settings, and ending them all at shutdown. */
export class LiveSseStreams {
  private readonly open = new Set<LiveSse>();
  private readonly heartbeatMs: number;
  /** A reader whose unsent backlog passes this is cut off; it resumes by its cursor. */
  readonly maxBufferedBytes: number;
  /** How much of the event log one read brings in for a reader of these streams. */
  readonly page: EventPage;

  constructor(private readonly options: LiveSseOptions) {
    this.heartbeatMs = options.heartbeatMs ?? 15_000;
    this.maxBufferedBytes = options.maxBufferedBytes ?? 4 * 1024 * 1024;
    this.page = replayPage(this.maxBufferedBytes);
  }

  /** Ends `live` when its reader is more than `maxBufferedBytes` behind; true when it did. */
  cutIfBehind(live: LiveSse, res: Response): boolean {
    if (res.writableLength <= this.maxBufferedBytes) return false;
    this.options.onSlowReader?.();
    live.end();
    return true;
  }

  /**
   * Waits until `res` has sent what it holds when that is `maxBufferedBytes` or more; true
   * when the stream may go on, false when it ended meanwhile (the reader left, shutdown, a
   * revoked key). What backpressure is for a stream that can wait: a replay of what is stored.
   */
  async drained(live: LiveSse, res: Response): Promise<boolean> {
    if (live.isEnded) return false;
    // Only a write that found the buffer full is followed by 'drain'.
    if (res.writableLength < this.maxBufferedBytes || !res.writableNeedDrain) return true;
    return new Promise<boolean>((resolve) => {
      const onDrain = () => {
        forget();
        resolve(!live.isEnded);
      };
      res.once('drain', onDrain);
      const forget = live.onEnd(() => {
        res.off('drain', onDrain);
        resolve(false);
      });
    });
  }

  start(res: Response, keyId: string, revoked: (reason: string) => string): LiveSse {
    return new LiveSse(res, {
      keyId,
      connections: this.options.connections,
      heartbeatMs: this.heartbeatMs,
      maxBufferedBytes: this.maxBufferedBytes,
      onSlowReader: this.options.onSlowReader,
      open: this.open,
      revoked,
    });
  }

  endAll(): void {
    for (const stream of this.open) stream.end();
  }
}
