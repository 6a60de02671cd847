import type { Response } from 'express';
import { checkCursor } from '../../events/cursor';
import { eventSchema, TERMINAL_EVENT_TYPES, type SwitchyardEvent } from '../../events/event';
import type { ResponseRecord } from '../store/openai-responses-repository';
import { isTerminal, type Turn } from '../../store/turns-repository';
import { responseShell, type ResponseObject } from '../response-object';
import { createResponseStreamMapper, type ResponseStreamEvent } from '../response-stream-mapper';
import { responseStreamError } from '../response-stream-error';
import { writesPerTick } from '../../subscriptions/writes-per-tick';
import { LiveSseStreams, type LiveSseOptions } from '../../api/live-sse';
import type { ConversationEventSource } from '../../api/turn-event-stream';

export interface ResponseStreamer {
  /**
   * Streams the response's events with `sequence_number > startingAfter` (-1: all of them): what
   * the log holds of its turn, then live, until the turn ends. The reader going away ends the
   * stream, not the turn.
   */
  stream(input: { record: ResponseRecord; turn: Turn; keyId: string; startingAfter: number; res: Response }): Promise<void>;
  /** Ends every open stream (shutdown): readers resume with `starting_after`. */
  endAll(): void;
}

const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-transform', connection: 'keep-alive', 'x-accel-buffering': 'no' } as const;

/**
 * The Responses API's stream over the conversation's event log (docs/API.md, "OpenAI-compatible
 * routes"): the turn's events, read from after the response's `afterSeq` and then followed live,
 * each mapped to its stream events (openai/response-stream-mapper.ts), which number
 * themselves; the stream ends with the response as stored, read when the turn's end is
 * announced (its end is committed before), or, for a reader whose `starting_after` is at or past
 * that end, with an `error` event saying so. A turn whose events the log no longer keeps whole
 * streams as `response.created`, `response.queued` and, once it has ended, its end, numbered
 * after the reader's `starting_after` (response-stream-mapper.ts, `finishUnmapped`).
 */
export function createResponseStreamer(
  source: ConversationEventSource,
  options: LiveSseOptions & { defaultModel: string; storedResponse(record: ResponseRecord): Promise<ResponseObject> },
): ResponseStreamer {
  const streams = new LiveSseStreams(options);
  return {
    endAll: () => streams.endAll(),
    async stream({ record, turn, keyId, startingAfter, res }) {
      res.writeHead(200, SSE_HEADERS);
      res.flushHeaders();
      /** The highest sequence_number this reader has: what it sent here, or what it resumes after. */
      let lastSent = startingAfter;
      // An error ends the stream after what the reader has, so that a reader that orders by
      // sequence_number (or resumes after the last one it saw) does not drop it as old.
      const errorEvent = (code: string, message: string) => sse({ type: 'error', code, message, sequence_number: lastSent + 1 });
      const live = streams.start(res, keyId, (reason) => errorEvent('unauthorized', reason));
      const mapper = createResponseStreamMapper({ turnId: turn.id, shell: { ...responseShell(record, options.defaultModel, turn.options), status: 'queued' } });
      const holdWrites = writesPerTick(res);
      const write = (events: ResponseStreamEvent[]) => {
        const shown = events.filter((event) => event.sequence_number > startingAfter);
        if (shown.length === 0 || live.isEnded) return;
        holdWrites();
        res.write(shown.map(sse).join(''));
        lastSent = shown[shown.length - 1]!.sequence_number;
      };
      const end = async () => {
        const final = mapper.finish(await options.storedResponse(record));
        // Nothing comes after the end: an empty stream would look like a cut one, resumed again and again.
        if (final.sequence_number <= startingAfter) return live.end(sse(pastTheEnd(record.id, final, startingAfter)));
        write([final]);
        live.end();
      };
      const endUnmapped = async () => {
        write([mapper.finishUnmapped(await options.storedResponse(record), startingAfter)]);
        live.end();
      };
      /**
       * Follows the log after `after`, live, handing on the turn's events until `deliver` says it
       * ended. `unmapped`: what to do when the log no longer holds the events after `after` by the
       * time the subscription is made (trimmed or expired in between): the turn can then only end
       * as one whose events the log does not keep whole.
       */
      const follow = async (after: number, deliver: (event: SwitchyardEvent) => boolean, unmapped: (oldestSeq: number) => Promise<void>) => {
        let ending = false;
        const outcome = await source.subscribe({
          conversationId: record.conversationId,
          after,
          deliver: (json) => {
            if (live.isEnded || ending) return;
            const event = eventOfTurn(json, turn.id);
            if (!event) return;
            // A reader this far behind is cut off; it resumes with starting_after.
            if (streams.cutIfBehind(live, res)) return;
            ending = deliver(event);
          },
          onError: () => live.end(),
        });
        if (!outcome.ok) {
          if (outcome.code === 'cursor_expired') return unmapped(outcome.oldestSeq);
          return live.end(errorEvent(outcome.code, outcome.message));
        }
        live.onEnd(outcome.subscription.dispose);
        if (!live.isEnded) outcome.subscription.start();
      };
      /** Waits for the turn's end after `oldestSeq`, for a turn that can only end unmapped. */
      const followToUnmappedEnd = (oldestSeq: number): Promise<void> =>
        follow(
          oldestSeq - 1,
          (event) => {
            if (!TERMINAL_EVENT_TYPES.has(event.type)) return false;
            endUnmapped().catch(() => live.end());
            return true;
          },
          followToUnmappedEnd,
        );
      write(mapper.start());

      // A turn whose first events the log no longer keeps (its cap, or its TTL) cannot be
      // mapped and numbered as it was first streamed: its end, once it has ended, is all it gets.
      const kept = checkCursor({ after: record.afterSeq, ...(await source.window(record.conversationId)) });
      if (!kept.ok && kept.code === 'cursor_expired') {
        if (isTerminal(turn.status)) return endUnmapped();
        return followToUnmappedEnd(kept.oldestSeq);
      }

      // What the log holds, a page at a time (about a quarter of the allowance in bytes, whatever
      // its events weigh), waiting for a reader that does not keep up.
      let lastSeq = record.afterSeq;
      let seenTurn = false;
      for (;;) {
        const page = await source.read(record.conversationId, lastSeq, streams.page);
        if (page.events.length === 0) break;
        for (const logged of page.events) {
          const event = eventOfTurn(logged.json, turn.id);
          if (!event) continue;
          seenTurn = true;
          if (res.writableLength >= streams.maxBufferedBytes && !(await streams.drained(live, res))) return;
          const mapped = mapper.map(event);
          write(mapped.events);
          if (mapped.ended) return end();
        }
        lastSeq = page.events[page.events.length - 1]!.seq;
        if (!page.full) break;
      }
      if (live.isEnded) return;
      // Ended, and the log holds none of it (Redis lost it): the stored response is all there is.
      if (!seenTurn && isTerminal(turn.status)) return endUnmapped();

      return follow(
        lastSeq,
        (event) => {
          const mapped = mapper.map(event);
          write(mapped.events);
          if (mapped.ended) end().catch(() => live.end());
          return mapped.ended;
        },
        followToUnmappedEnd,
      );
    },
  };
}

/** The event if it is of this turn (a cheap look at its text first: most may be of others). */
export function eventOfTurn(json: string, turnId: string): SwitchyardEvent | null {
  if (!json.includes(`"turnId":${JSON.stringify(turnId)}`)) return null;
  const event = eventSchema.parse(JSON.parse(json)) as SwitchyardEvent;
  return event.turnId === turnId ? event : null;
}

/** Why a resume after the response's last event gets no event of it (numbered after what the reader has, so that it sees it). */
function pastTheEnd(id: string, final: ResponseStreamEvent, startingAfter: number): ResponseStreamEvent {
  const message = `response ${id} ended with event ${final.sequence_number} (${final.type}); no event comes after starting_after ${startingAfter}: retrieve it without stream=true for the response`;
  return responseStreamError({ code: 'invalid_request', message, param: 'starting_after' }, startingAfter + 1);
}

function sse(event: { type: string } & Record<string, unknown>): string {
  return `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`;
}

/**
 * Resolves when the turn has ended (its end event is in the log), or `signal` aborts: what a
 * foreground response without `stream` waits for before it answers.
 */
export async function waitForTurnEnd(
  source: ConversationEventSource,
  record: Pick<ResponseRecord, 'conversationId' | 'afterSeq'>,
  turnId: string,
  signal: AbortSignal,
): Promise<void> {
  await new Promise<void>((resolve, reject) => {
    let dispose = () => undefined as void;
    const finish = () => {
      dispose();
      signal.removeEventListener('abort', finish);
      resolve();
    };
    signal.addEventListener('abort', finish);
    source
      .subscribe({
        conversationId: record.conversationId,
        after: record.afterSeq,
        deliver: (json) => {
          const event = eventOfTurn(json, turnId);
          if (event && TERMINAL_EVENT_TYPES.has(event.type)) finish();
        },
        onError: (error) => {
          dispose();
          reject(error);
        },
      })
      .then((outcome) => {
        if (!outcome.ok) return finish();
        dispose = outcome.subscription.dispose;
        if (signal.aborted) return finish();
        outcome.subscription.start();
      }, reject);
  });
}
