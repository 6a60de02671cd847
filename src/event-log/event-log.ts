import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { RedisClient } from '../redis/redis-connection';
import { isBackendUnavailable } from '../errors/backend-unavailable';
import { SwitchyardError } from '../errors/switchyard-error';
import { TERMINAL_EVENT_TYPES, type EventBody } from '../events/event';
import type { DeltaPacing } from './delta-pacing';

export interface EventLogOptions {
  /** Appends and subscription reads: a connection that waits out a Redis blip. */
  redis: RedisClient;
  /**
   * A connection that fails at once while Redis is down, for {@link EventLog.latestSeq}, which
   * answers HTTP requests (default: `redis`).
   */
  failFastRedis?: RedisClient;
  prefix: string;
  /** Events kept per conversation (approximately: trimming works on whole stream nodes). */
  maxLength: number;
  /** Seconds a conversation's log and counter live after its last event. */
  ttlSeconds: number;
  /** The conversation's last seq as PostgreSQL keeps it: where a lost counter restarts. */
  seqFloor(conversationId: string): Promise<number>;
  /**
   * Announce events with SPUBLISH (sharded pub/sub, Redis 7) instead of PUBLISH: on a cluster
   * a classic PUBLISH is relayed to every node, a sharded one stays on the conversation's
   * node. Subscribers must then use SSUBSCRIBE (see {@link LiveEvents}). Default false.
   */
  sharded?: boolean;
  /** Gathers the deltas of turns that write here while many answers stream (see TurnEvents). */
  deltaPacing?: DeltaPacing;
}

export interface LoggedEvent {
  seq: number;
  /** The event as JSON text, `seq` first; sent to clients as it is, never re-encoded. */
  json: string;
  /** When it was appended (ms since the epoch, Redis's clock); absent on entries older than this field. */
  appendedAt?: number;
}

const APPEND_SCRIPT = fs.readFileSync(path.join(__dirname, 'lua', 'append-events-6.lua'), 'utf8');
const READ_SCRIPT = fs.readFileSync(path.join(__dirname, 'lua', 'read-events-1.lua'), 'utf8');

/** How much one read of the log returns at most. */
export interface EventPage {
  /** Events; default 500. */
  maxEvents?: number;
  /** Bytes of event JSON; default 1 MiB. An event larger than this comes alone. */
  maxBytes?: number;
}

const PAGE_EVENTS = 500;
const PAGE_BYTES = 1024 * 1024;
/**
 * Batch ids a conversation remembers. A resent batch is one of the last few appended to its
 * conversation (only the producers writing to it at that moment can have one in flight).
 */
const BATCHES_KEPT = 64;

type ScriptedRedis = RedisClient & {
  appendEvents(seqKey: string, streamKey: string, attemptKey: string, batchesKey: string, endKey: string, inflightKey: string, ...args: (string | number)[]): Promise<number>;
  readEvents(streamKey: string, start: string, maxEvents: number, maxBytes: number): Promise<[[string, string[]][], number]>;
};

/** Events emitted by a worker carry its attempt; a later attempt's events fence them off. */
export interface AttemptFence {
  turnId: string;
  attempt: number;
}

/** A later attempt of the turn has emitted events: this worker is stale and must stop. */
export class AttemptFencedError extends SwitchyardError<'attempt_fenced'> {
  readonly code = 'attempt_fenced';
}

/**
 * The in-flight state of a turn's running step (see InflightState), written by the batch that
 * carries it: `value` null deletes it.
 */
export interface InflightWrite {
  turnId: string;
  value: string | null;
  ttlSeconds: number;
}

/** Where a turn's in-flight state is kept: in its conversation's slot, so that appends write it. */
export function inflightStateKey(prefix: string, conversationId: string, turnId: string): string {
  return `${prefix}:conv:{${conversationId}}:inflight:${turnId}`;
}

/** The batch announces the end of a turn whose end was announced already: nothing was appended. */
export class TurnEndAnnouncedError extends SwitchyardError<'turn_end_announced'> {
  readonly code = 'turn_end_announced';
}

/**
 * A conversation's events in Redis: a counter that numbers them, a capped stream that replays
 * them, and a channel that announces them to gateways. One Lua script does all three.
 */
export class EventLog {
  private readonly redis: ScriptedRedis;
  private readonly failFastRedis: ScriptedRedis;
  /** Batch ids: this log's own random part, then a counter. */
  private readonly batchPrefix = randomBytes(8).toString('base64url');
  private batchCount = 0;
  readonly deltaPacing: DeltaPacing | undefined;

  constructor(private readonly options: EventLogOptions) {
    this.redis = options.redis as unknown as ScriptedRedis;
    this.failFastRedis = (options.failFastRedis ?? options.redis) as unknown as ScriptedRedis;
    this.deltaPacing = options.deltaPacing;
    // Defined once per connection; EventLogs sharing a connection share the command.
    for (const connection of new Set([options.redis, this.failFastRedis as unknown as RedisClient])) {
      if (typeof (connection as unknown as { appendEvents?: unknown }).appendEvents !== 'function') {
        connection.defineCommand('appendEvents', { numberOfKeys: 6, lua: APPEND_SCRIPT });
      }
      if (typeof (connection as unknown as { readEvents?: unknown }).readEvents !== 'function') {
        connection.defineCommand('readEvents', { numberOfKeys: 1, lua: READ_SCRIPT });
      }
    }
  }

  /**
   * The key names (and the channel) share a hash tag so that a Redis Cluster keeps a
   * conversation on one slot: the append script touches all of them at once.
   */
  private seqKey(conversationId: string): string {
    return `${this.options.prefix}:conv:{${conversationId}}:seq`;
  }

  private streamKey(conversationId: string): string {
    return `${this.options.prefix}:conv:{${conversationId}}:events`;
  }

  private attemptKey(conversationId: string, turnId: string): string {
    return `${this.options.prefix}:conv:{${conversationId}}:attempt:${turnId}`;
  }

  private batchesKey(conversationId: string): string {
    return `${this.options.prefix}:conv:{${conversationId}}:batches`;
  }

  private endKey(conversationId: string, turnId: string): string {
    return `${this.options.prefix}:conv:{${conversationId}}:ended:${turnId}`;
  }

  channel(conversationId: string): string {
    return `${this.options.prefix}:conv:{${conversationId}}:live`;
  }

  /** Whether {@link channel} is a sharded channel (SSUBSCRIBE) or a classic one. */
  get sharded(): boolean {
    return this.options.sharded ?? false;
  }

  async append(body: EventBody): Promise<number> {
    return this.appendBatch(body.conversationId, [body]);
  }

  /**
   * Appends events of one conversation in one round trip; returns the seq of the last one.
   * With a fence, throws {@link AttemptFencedError} if a later attempt of the turn has begun.
   * Exactly once: the connection resends a call whose reply a reconnect lost, and the script
   * recognises the batch by its id if its first run was applied. A batch that ends a turn (it
   * holds its final event) is appended once per turn: a second one throws
   * {@link TurnEndAnnouncedError}. `inflight` is written with the events, and only if they are
   * appended; a batch may carry it alone (then it returns 0).
   */
  async appendBatch(conversationId: string, bodies: EventBody[], fence?: AttemptFence, inflight?: InflightWrite): Promise<number> {
    return this.appendOn(this.redis, conversationId, bodies, fence, inflight);
  }

  /**
   * Refuses from now on every event of the turn's attempts below `attempt`, as a later
   * attempt's first append does: what the log holds of them is all they will have announced.
   * Like {@link readNow}, on the connection that fails at once while Redis is down, so that a
   * caller inside a transaction does not hold its locks through an outage.
   */
  async fenceAttemptsBelow(conversationId: string, turnId: string, attempt: number): Promise<void> {
    try {
      // A batch of no events only raises the turn's attempt.
      await this.appendOn(this.failFastRedis, conversationId, [], { turnId, attempt });
    } catch (error) {
      // A later attempt (or an imposed end) fenced them already.
      if (!AttemptFencedError.isInstance(error)) throw error;
    }
  }

  private async appendOn(redis: ScriptedRedis, conversationId: string, bodies: EventBody[], fence?: AttemptFence, inflight?: InflightWrite): Promise<number> {
    const events = bodies.map((body) => JSON.stringify(body));
    const batchId = `${this.batchPrefix}:${++this.batchCount}`;
    const ending = bodies.find((body) => TERMINAL_EVENT_TYPES.has(body.type));
    const run = (floor: string) =>
      redis.appendEvents(
        this.seqKey(conversationId),
        this.streamKey(conversationId),
        fence ? this.attemptKey(conversationId, fence.turnId) : this.seqKey(conversationId),
        this.batchesKey(conversationId),
        ending ? this.endKey(conversationId, ending.turnId) : this.seqKey(conversationId),
        inflight ? inflightStateKey(this.options.prefix, conversationId, inflight.turnId) : this.seqKey(conversationId),
        this.channel(conversationId),
        this.sharded ? 'SPUBLISH' : 'PUBLISH',
        this.options.maxLength,
        this.options.ttlSeconds,
        floor,
        fence ? fence.attempt : '',
        batchId,
        BATCHES_KEPT,
        ending ? '1' : '',
        inflight ? (inflight.value ?? 'DEL') : '',
        inflight?.ttlSeconds ?? 0,
        ...events,
      );
    let seq = await run('');
    if (seq === -1) seq = await run(String(await this.options.seqFloor(conversationId)));
    if (seq === -2) throw new AttemptFencedError(`attempt ${fence?.attempt} of turn ${fence?.turnId} was superseded`);
    if (seq === -3) throw new TurnEndAnnouncedError(`the end of turn ${ending?.turnId} was announced already`);
    return seq;
  }

  /**
   * Events with seq > `afterSeq`, oldest first, within `page` (by count and by bytes, so that a
   * reader holds about `maxBytes` whatever the events weigh). `full`: the page stopped at one of
   * its bounds, and more events may follow; false when it reached the end of the log.
   */
  async read(conversationId: string, afterSeq: number, page: EventPage = {}): Promise<{ events: LoggedEvent[]; full: boolean }> {
    return this.readFrom(this.redis, conversationId, afterSeq, page);
  }

  /** {@link read} on the connection that fails at once while Redis is down. */
  async readNow(conversationId: string, afterSeq: number, page: EventPage = {}): Promise<{ events: LoggedEvent[]; full: boolean }> {
    return this.readFrom(this.failFastRedis, conversationId, afterSeq, page);
  }

  private async readFrom(redis: ScriptedRedis, conversationId: string, afterSeq: number, page: EventPage): Promise<{ events: LoggedEvent[]; full: boolean }> {
    const [entries, full] = await redis.readEvents(this.streamKey(conversationId), `${afterSeq + 1}-0`, page.maxEvents ?? PAGE_EVENTS, page.maxBytes ?? PAGE_BYTES);
    // An entry's fields are ['e', json, 't', appendedAt] (the last two missing on older entries).
    return {
      events: entries.map(([id, fields]) => ({
        seq: Number.parseInt(id, 10),
        json: fields[1]!,
        appendedAt: fields[3] === undefined ? undefined : Number(fields[3]),
      })),
      full: full === 1,
    };
  }

  /** What the log can replay: the oldest seq it keeps (null when it keeps none) and the latest seq. */
  async window(conversationId: string): Promise<{ oldestSeq: number | null; latestSeq: number }> {
    const seen = await this.readWindow(conversationId);
    if (seen.counter !== null) return { oldestSeq: seen.oldestSeq, latestSeq: seen.counter };
    // No counter: a log that has had no event, or one Redis lost (then PostgreSQL's floor says
    // where it stood). The floor is read after the log, so events appended meanwhile may have
    // raised it (a short turn ended) while the log read saw none, which would put every cursor
    // out of the window (`cursor_expired` for a subscription from 0). The log read again tells
    // the two apart: a counter now is the window; still none, the floor is.
    const floor = await this.options.seqFloor(conversationId);
    if (floor === 0) return { oldestSeq: seen.oldestSeq, latestSeq: 0 };
    const again = await this.readWindow(conversationId);
    return { oldestSeq: again.oldestSeq, latestSeq: again.counter ?? floor };
  }

  /**
   * The oldest seq the stream keeps and the counter, in one transaction (the keys share the
   * conversation's slot): two commands sent together may still have an append run between
   * them, and an empty log read before a counter read after the first append would put every
   * cursor before it out of the window.
   */
  private async readWindow(conversationId: string): Promise<{ oldestSeq: number | null; counter: number | null }> {
    const replies = await this.redis.multi().xrange(this.streamKey(conversationId), '-', '+', 'COUNT', 1).get(this.seqKey(conversationId)).exec();
    if (!replies) throw new Error(`the window of conversation ${conversationId} was not read (its transaction was discarded)`);
    for (const [error] of replies) if (error) throw error;
    const oldest = replies[0]![1] as [string, string[]][];
    const counter = replies[1]![1] as string | null;
    return { oldestSeq: oldest[0] ? Number.parseInt(oldest[0][0], 10) : null, counter: counter === null ? null : Number(counter) };
  }

  /**
   * The latest seq, for HTTP answers. While Redis is unreachable it is PostgreSQL's copy (which
   * lags at most by the events of a turn in flight) rather than a request that hangs or fails:
   * a conversation is readable from PostgreSQL alone.
   */
  async latestSeq(conversationId: string): Promise<number> {
    let counter: string | null;
    try {
      counter = await (this.options.failFastRedis ?? this.redis).get(this.seqKey(conversationId));
    } catch (error) {
      if (!isBackendUnavailable(error)) throw error;
      counter = null;
    }
    return this.counterOrFloor(conversationId, counter);
  }

  private async counterOrFloor(conversationId: string, counter: string | null): Promise<number> {
    return counter === null ? this.options.seqFloor(conversationId) : Number(counter);
  }
}
