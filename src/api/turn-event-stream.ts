import type { Request, Response } from 'express';
import type { SubscribeOutcome } from '../subscriptions/conversation-subscription';
import { checkCursor, type CursorCheck } from '../events/cursor';
import { TERMINAL_EVENT_TYPES, type EventType } from '../events/event';
import type { LoggedEvent } from '../store/event-log';
import { isTerminal, type Turn } from '../store/turns-repository';
import { LiveSseStreams, type LiveSseOptions } from './live-sse';
import { writesPerTick } from '../runtime/writes-per-tick';

/** What the SSE route needs of the event log: a replay, and a replay-then-live subscription. */
export interface ConversationEventSource {
  read(conversationId: string, afterSeq: number): Promise<{ events: LoggedEvent[] }>;
  /** The oldest seq the log keeps (null: none) and the latest seq given out. */
  window(conversationId: string): Promise<{ oldestSeq: number | null; latestSeq: number }>;
  subscribe(input: {
    conversationId: string;
    after: number | undefined;
    deliver(json: string, seq: number): void;
    onError(error: Error): void;
  }): Promise<SubscribeOutcome>;
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
 * event. A reader that falls `maxBufferedBytes` behind is cut off; it resumes by its last id.
 * A `Last-Event-ID` that is not a seq, or is beyond the latest, gets one `error` event
 * `{code: "bad_cursor"}`; one older than the log keeps, `{code: "cursor_expired", oldestSeq}`
 * (reload the turn over HTTP); then the stream ends, as the websocket answers a subscribe.
 */
export function createTurnEventStreamer(
  source: ConversationEventSource,
  options: LiveSseOptions,
): TurnEventStreamer {
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
        for (let cursor = checked.after; ; ) {
          const { events } = await source.read(turn.conversationId, cursor);
          if (events.length === 0) break;
          for (const event of events) write(event.json, event.seq);
          cursor = events[events.length - 1]!.seq;
        }
        res.end();
        return;
      }

      const live = streams.start(res, keyId, (reason) => errorEvent({ code: 'unauthorized', message: reason }));
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
