import type { Response } from 'express';
import { eventSchema, type SwitchyardEvent } from '../events/event';
import { isTerminal, type Turn } from '../store/turns-repository';
import { closingChunks, replayChunks, type UiChunk } from '../ui-chat/ui-message-chunks';
import { LiveSseStreams, type LiveSseOptions } from './live-sse';
import type { ConversationEventSource } from './turn-event-stream';

export interface UiMessageStreamer {
  /**
   * Streams the turn's assistant message: `start` (messageId = turn id), then the chunks of its
   * events after `after` (undefined: from the oldest kept, a replay of the whole message), until
   * it ends or waits on client tools. The client going away ends the stream, not the turn.
   */
  stream(input: {
    turn: Turn;
    keyId: string;
    after: number | undefined;
    /** The turn's step at `after` (default 0), when the stream starts inside a step. */
    step?: number;
    res: Response;
  }): Promise<void>;
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
 * still the turn's last word; then it follows live after the last seq it read.
 */
export function createUiMessageStreamer(
  source: ConversationEventSource,
  options: LiveSseOptions & { isClientTool(toolName: string): boolean },
): UiMessageStreamer {
  const streams = new LiveSseStreams(options);

  return {
    endAll: () => streams.endAll(),
    async stream({ turn, keyId, after, step, res }) {
      res.writeHead(200, UI_MESSAGE_STREAM_HEADERS);
      res.write(sse([{ type: 'start', messageId: turn.id }]));

      const { events, lastSeq } = await readTurnEvents(source, turn, after ?? 0);
      const replay = replayChunks({ turnId: turn.id, isClientTool: options.isClientTool, events, ...(step === undefined ? {} : { step }) });
      if (replay.end) return void res.end(sse(replay.chunks) + DONE);
      // Ended before this request, and its events are no longer kept: say how it ended.
      if (isTerminal(turn.status)) return void res.end(sse([...replay.chunks, ...closingChunks(turn)]) + DONE);
      res.write(sse(replay.chunks));
      const { mapper } = replay;

      const live = streams.start(res, keyId, (reason) => sse([{ type: 'error', errorText: `unauthorized: ${reason}` }]) + DONE);
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

function sse(chunks: UiChunk[]): string {
  return chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('');
}

/** The turn's events the log holds after `after`, and the last seq read (of any turn). */
async function readTurnEvents(source: ConversationEventSource, turn: Turn, after: number): Promise<{ events: SwitchyardEvent[]; lastSeq: number }> {
  const events: SwitchyardEvent[] = [];
  let lastSeq = after;
  for (;;) {
    const page = await source.read(turn.conversationId, lastSeq);
    if (page.events.length === 0) break;
    for (const logged of page.events) {
      const event = eventSchema.parse(JSON.parse(logged.json)) as SwitchyardEvent;
      if (event.turnId === turn.id) events.push(event);
    }
    lastSeq = page.events[page.events.length - 1]!.seq;
  }
  return { events, lastSeq };
}
