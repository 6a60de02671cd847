import type { Response } from 'express';
import { eventSchema, type SwitchyardEvent } from '../events/event';
import { isTerminal, type Turn } from '../store/turns-repository';
import type { EventPage } from '../event-log/event-log';
import { closingChunks, startReplay, type UiChunk } from '../ui-chat/ui-message-chunks';
import { createReplayPlanner, type ReplayPlan } from '../ui-chat/replay-plan';
import { LiveSseStreams, type LiveSseOptions } from './live-sse';
import type { ConversationEventSource } from './turn-event-stream';

export interface UiMessageStreamer {
  /**
   * Streams the turn's assistant message: `start` (messageId = turn id), then the chunks of its
   * events after `after` (undefined: from the oldest kept, a replay of the whole message), until
   * it ends or waits on client tools. `step`: the step the turn was in at `after` (default: the
   * turn's latest). The client going away ends the stream, not the turn.
   */
  stream(input: { turn: Turn; keyId: string; after: number | undefined; step?: number; res: Response }): Promise<void>;
  /** Ends every open stream (shutdown): readers resume with `GET /api/chat/:id/stream`. */
  endAll(): void;
}

const UI_MESSAGE_STREAM_HEADERS = {
  'content-type': 'text/event-stream; charset=utf-8',
  'cache-control': 'no-cache, no-transform',
  connection: 'keep-alive',
  'x-accel-buffering': 'no',
  'x-vercel-ai-ui-message-stream': 'v1',
} as const;

/**
 * The AI SDK's UI message stream over the event log. What the log already holds is read first,
 * so a replay knows which step outputs were discarded later and whether a `turn-waiting` is
 * still the turn's last word, then read again and sent; then it follows live after the last seq
 * the first reading saw.
 */
export function createUiMessageStreamer(source: ConversationEventSource, options: LiveSseOptions & { isClientTool(toolName: string): boolean }): UiMessageStreamer {
  const streams = new LiveSseStreams(options);

  return {
    endAll: () => streams.endAll(),
    async stream({ turn, keyId, after, step = turn.step, res }) {
      res.writeHead(200, UI_MESSAGE_STREAM_HEADERS);
      res.write(sse([{ type: 'start', messageId: turn.id }]));

      const live = streams.start(res, keyId, (reason) => sse([{ type: 'error', errorText: `unauthorized: ${reason}` }]) + DONE);
      // The log is read twice, a page at a time (about a quarter of the allowance in bytes,
      // whatever its events weigh): once for what the replay must know of all of it, once to
      // send it. Holding the turn's events from one pass would cost the whole turn per reader.
      const { plan, lastSeq } = await planReplay(source, turn, after ?? 0, streams.page);
      if (live.isEnded) return;
      const replay = startReplay({ turnId: turn.id, isClientTool: options.isClientTool, plan, step });
      // A replay waits for its reader rather than buffering megabytes for it; one that stops
      // reading is cut off by the heartbeat, before the end, and resumes.
      let piece = '';
      const send = async (): Promise<boolean> => {
        if (!(await streams.drained(live, res))) return false;
        res.write(piece);
        piece = '';
        return true;
      };
      let ended = false;
      for await (const event of turnEvents(source, turn, { seq: after ?? 0 }, lastSeq, streams.page)) {
        const mapped = replay.map(event);
        piece += sse(mapped.chunks);
        if (piece.length >= REPLAY_WRITE_BYTES && !(await send())) return;
        if (mapped.end) {
          ended = true;
          break;
        }
      }
      // Ended before this request, and its events are no longer kept: say how it ended.
      const closing = ended || !isTerminal(turn.status) ? [] : closingChunks(turn);
      piece += sse(closing);
      if (piece && !(await send())) return;
      if (ended || closing.length > 0) return live.end(DONE);
      if (live.isEnded) return;
      const { mapper } = replay;

      const marker = `"turnId":${JSON.stringify(turn.id)}`;
      const outcome = await source.subscribe({
        conversationId: turn.conversationId,
        after: lastSeq,
        deliver: (json) => {
          if (live.isEnded || !json.includes(marker)) return;
          // A reader this far behind is cut off; it resumes with GET /api/chat/:id/stream.
          if (streams.cutIfBehind(live, res)) return;
          const { chunks, end } = mapper.map(eventSchema.parse(JSON.parse(json)) as SwitchyardEvent);
          if (end) live.end(sse(chunks) + DONE);
          else res.write(sse(chunks));
        },
        onError: () => live.end(),
      });
      if (!outcome.ok) return live.end(sse([{ type: 'error', errorText: `${outcome.code}: ${outcome.message}` }]) + DONE);
      live.onEnd(outcome.subscription.dispose);
      if (!live.isEnded) outcome.subscription.start();
    },
  };
}

const DONE = 'data: [DONE]\n\n';

/** How much of a replay is written before its reader's backlog is looked at again. */
const REPLAY_WRITE_BYTES = 64 * 1024;

function sse(chunks: UiChunk[]): string {
  return chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('');
}

/** What a replay of the turn after `after` must know (see ReplayPlan), and the last seq the log held then (of any turn). */
async function planReplay(source: ConversationEventSource, turn: Turn, after: number, page: EventPage): Promise<{ plan: ReplayPlan; lastSeq: number }> {
  const planner = createReplayPlanner();
  const read = { seq: after };
  for await (const event of turnEvents(source, turn, read, Number.MAX_SAFE_INTEGER, page)) planner.see(event);
  return { plan: planner.plan(), lastSeq: read.seq };
}

/**
 * The turn's events the log holds after `read.seq`, up to `upTo`, a page at a time; `read.seq`
 * follows the last seq read, of any turn.
 */
async function* turnEvents(source: ConversationEventSource, turn: Turn, read: { seq: number }, upTo: number, page: EventPage): AsyncGenerator<SwitchyardEvent> {
  // Cheap filter before parsing: a conversation's log may hold other turns' events.
  const marker = `"turnId":${JSON.stringify(turn.id)}`;
  for (;;) {
    const { events, full } = await source.read(turn.conversationId, read.seq, page);
    for (const logged of events) {
      if (logged.seq > upTo) return;
      read.seq = logged.seq;
      if (!logged.json.includes(marker)) continue;
      const event = eventSchema.parse(JSON.parse(logged.json)) as SwitchyardEvent;
      if (event.turnId === turn.id) yield event;
    }
    if (!full || events.length === 0) return;
  }
}
