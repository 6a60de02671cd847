import type { Request, Response } from 'express';
import type { SubscribeOutcome } from '../subscriptions/conversation-subscription';
import { checkCursor, type CursorCheck } from '../events/cursor';
import { TERMINAL_EVENT_TYPES, type EventType } from '../events/event';
import type { EventPage, LoggedEvent } from '../event-log/event-log';
import { isTerminal, type Turn } from '../store/turns-repository';
import { LiveSseStreams, type LiveSseOptions } from './live-sse';
import { writesPerTick } from '../subscriptions/writes-per-tick';

/** What the SSE route needs of the event log: a replay, and a replay-then-live subscription. */
export interface ConversationEventSource {
  /**
   * Events with seq > `afterSeq`, oldest first, within `page` (default: the log's page); `full`
   * when the page stopped at a bound and more may follow.
   */
  read(conversationId: string, afterSeq: number, page?: EventPage): Promise<{ events: LoggedEvent[]; full: boolean }>;
  /** The oldest seq the log keeps (null: none) and the latest seq given out. */
  window(conversationId: string): Promise<{ oldestSeq: number | null; latestSeq: number }>;
  subscribe(input: { conversationId: string; after: number | undefined; deliver(json: string, seq: number): void; onError(error: Error): void }): Promise<SubscribeOutcome>;
}

export interface TurnEventStreamer {
  /** `keyId`: the API key the reader authenticated with; revoking it ends the stream. */
  stream(turn: Turn, keyId: string, req: Request, res: Response): Promise<void>;
  /** Ends every open stream after the last event it sent (shutdown: readers resume elsewhere). */
  endAll(): void;
}

/**
 * `GET /v1/turns/:id/events`: the turn's events as server-sent events, each with `id: <seq>`
 * so a reconnecting EventSource resumes with `Last-Event-ID`. Ends after the turn's final
 * event. A live reader that falls `maxBufferedBytes` behind is cut off; it resumes by its last
 * id. A replay of a finished turn waits for its reader instead, holding at most about
 * `maxBufferedBytes` for it.
 * A `Last-Event-ID` that is not a seq, or is beyond the latest, gets one `error` event
 * `{code: "bad_cursor"}`; one older than the log keeps, `{code: "cursor_expired", oldestSeq}`
 * (reload the turn over HTTP); then the stream ends, as the websocket answers a subscribe.
 */
export function createTurnEventStreamer(source: ConversationEventSource, options: LiveSseOptions): TurnEventStreamer {
  const streams = new LiveSseStreams(options);
  return {
    endAll: () => streams.endAll(),
    async stream(turn, keyId, req, res) {
      const after = readLastEventId(req.header('last-event-id') ?? req.query.lastEventId);
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      res.flushHeaders();
      // Cheap filter before parsing: most events of a busy conversation belong to other turns.
      const marker = `"turnId":${JSON.stringify(turn.id)}`;
      const refuse = (refusal: Extract<CursorCheck, { ok: false }>) => {
        const { ok: _ok, ...error } = refusal;
        res.end(errorEvent(error));
      };
      if (after === 'invalid') return refuse({ ok: false, code: 'bad_cursor', message: 'Last-Event-ID must be an event seq (a non-negative integer)' });
      const revoked = (reason: string) => errorEvent({ code: 'unauthorized', message: reason });

      const holdWrites = writesPerTick(res);
      /** Writes the event if it is this turn's; true when it was the turn's last. */
      const write = (json: string, seq: number): boolean => {
        if (!json.includes(marker)) return false;
        const type = (JSON.parse(json) as { type: EventType }).type;
        holdWrites();
        res.write(`id: ${seq}\nevent: ${type}\ndata: ${json}\n\n`);
        return TERMINAL_EVENT_TYPES.has(type);
      };

      if (isTerminal(turn.status)) {
        // A finished turn: replay what the log still keeps, then end.
        const checked = checkCursor({ after, ...(await source.window(turn.conversationId)) });
        if (!checked.ok) return refuse(checked);
        const replay = streams.start(res, keyId, revoked);
        // A page at a time, each about a quarter of the allowance in bytes whatever its events
        // weigh: the page and the reader's backlog are what this reader costs.
        for (let cursor = checked.after; ;) {
          const { events, full } = await source.read(turn.conversationId, cursor, streams.page);
          for (const event of events) {
            // A reader that does not keep up is waited for rather than buffered for: on a
            // finished turn nothing is missed by waiting.
            if (res.writableLength >= streams.maxBufferedBytes && !(await streams.drained(replay, res))) return;
            if (replay.isEnded) return;
            // Its last event: what the log holds after it is of later turns.
            if (write(event.json, event.seq)) return replay.end();
          }
          if (!full || events.length === 0) break;
          cursor = events[events.length - 1]!.seq;
        }
        replay.end();
        return;
      }

      const live = streams.start(res, keyId, revoked);
      const outcome = await source.subscribe({
        conversationId: turn.conversationId,
        after,
        deliver: (json, seq) => {
          if (live.isEnded) return;
          if (streams.cutIfBehind(live, res)) return;
          if (write(json, seq)) live.end();
        },
        onError: () => live.end(),
      });
      if (!outcome.ok) {
        const { ok: _ok, ...error } = outcome;
        return live.end(errorEvent(error));
      }
      live.onEnd(outcome.subscription.dispose);
      if (live.isEnded) return;
      outcome.subscription.start();
    },
  };
}

/** The seq a reader resumes after (header, or `?lastEventId=` where headers cannot be set). */
function readLastEventId(value: unknown): number | undefined | 'invalid' {
  if (value === undefined) return undefined;
  return typeof value === 'string' && /^\d{1,15}$/.test(value) ? Number(value) : 'invalid';
}

/** An SSE `error` event: it ends a stream that cannot go on, saying why. */
function errorEvent(error: { code: string; message: string; oldestSeq?: number }): string {
  return `event: error\ndata: ${JSON.stringify(error)}\n\n`;
}
