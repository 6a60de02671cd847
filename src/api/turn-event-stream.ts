import type { Request, Response } from 'express';
import type { SubscribeOutcome } from '../events/conversation-subscription';
import { TERMINAL_EVENT_TYPES, type EventType } from '../events/event';
import type { LoggedEvent } from '../store/event-log';
import { isTerminal, type Turn } from '../store/turns-repository';

/** What the SSE route needs of the event log: a replay, and a replay-then-live subscription. */
export interface ConversationEventSource {
  read(conversationId: string, afterSeq: number): Promise<{ events: LoggedEvent[] }>;
  subscribe(input: {
    conversationId: string;
    after: number | undefined;
    deliver(json: string, seq: number): void;
    onError(error: Error): void;
  }): Promise<SubscribeOutcome>;
}

export interface TurnEventStreamer {
  stream(turn: Turn, req: Request, res: Response): Promise<void>;
}

/**
 * `GET /v1/turns/:id/events`: the turn's events as server-sent events, each with `id: <seq>`
 * so a reconnecting EventSource resumes with `Last-Event-ID`. Ends after the turn's final
 * event. A reader that falls `maxBufferedBytes` behind is cut off; it resumes by its last id.
 */
export function createTurnEventStreamer(
  source: ConversationEventSource,
  options: { heartbeatMs?: number; maxBufferedBytes?: number } = {},
): TurnEventStreamer {
  const heartbeatMs = options.heartbeatMs ?? 15_000;
  const maxBufferedBytes = options.maxBufferedBytes ?? 4 * 1024 * 1024;
  return {
    async stream(turn, req, res) {
      const lastEventId = Number(req.header('last-event-id') ?? req.query.lastEventId);
      const after = Number.isSafeInteger(lastEventId) && lastEventId >= 0 ? lastEventId : undefined;
      res.writeHead(200, {
        'content-type': 'text/event-stream; charset=utf-8',
        'cache-control': 'no-cache, no-transform',
        connection: 'keep-alive',
        'x-accel-buffering': 'no',
      });
      res.flushHeaders();
      // Cheap filter before parsing: most events of a busy conversation belong to other turns.
      const marker = `"turnId":${JSON.stringify(turn.id)}`;
      let ended = false;
      /** Writes the event if it is this turn's; true when it was the turn's last. */
      const write = (json: string, seq: number): boolean => {
        if (ended || !json.includes(marker)) return false;
        const type = (JSON.parse(json) as { type: EventType }).type;
        res.write(`id: ${seq}\nevent: ${type}\ndata: ${json}\n\n`);
        return TERMINAL_EVENT_TYPES.has(type);
      };

      if (isTerminal(turn.status)) {
        // A finished turn: replay what the log still keeps, then end.
        for (let cursor = after ?? 0; ; ) {
          const { events } = await source.read(turn.conversationId, cursor);
          if (events.length === 0) break;
          for (const event of events) write(event.json, event.seq);
          cursor = events[events.length - 1]!.seq;
        }
        res.end();
        return;
      }

      const heartbeat = setInterval(() => res.write(': keep-alive\n\n'), heartbeatMs);
      let dispose = () => {};
      const finish = () => {
        if (ended) return;
        ended = true;
        clearInterval(heartbeat);
        dispose();
        res.end();
      };
      req.on('close', finish);
      const subscribeFrom = (from: number | undefined) =>
        source.subscribe({
          conversationId: turn.conversationId,
          after: from,
          deliver: (json, seq) => {
            if (res.writableLength > maxBufferedBytes) return finish();
            if (write(json, seq)) finish();
          },
          onError: finish,
        });
      let outcome = await subscribeFrom(after);
      // A cursor the log no longer has, or one from the future: start from what it keeps.
      if (!outcome.ok) outcome = await subscribeFrom(undefined);
      if (!outcome.ok) return finish();
      dispose = outcome.subscription.dispose;
      if (ended) return dispose();
      outcome.subscription.start();
    },
  };
}
