import type { EventPage, LoggedEvent } from '../event-log/event-log';
import type { LiveListener } from '../event-log/live-events';
import { coerceError, SwitchyardError } from '../errors/switchyard-error';
import { checkCursor, type CursorCheck } from '../events/cursor';

export interface SubscriptionSources {
  eventLog: {
    read(conversationId: string, afterSeq: number, page?: EventPage): Promise<{ events: LoggedEvent[]; full: boolean }>;
    window(conversationId: string): Promise<{ oldestSeq: number | null; latestSeq: number }>;
  };
  /**
   * How much one read of the log brings in: what a subscriber holds while it hands a page on,
   * besides what its socket buffers (default: the log's own page).
   */
  page?: EventPage;
  liveEvents: { listen(conversationId: string, listener: LiveListener): Promise<() => void> };
  /** Called when pub/sub reconnected: whatever it lost must be read from the log. */
  onReconnect?(listener: () => void): () => void;
}

export interface ConversationSubscription {
  /** The latest seq when the subscription was made (the `subscribed` frame's `seq`). */
  latestSeq: number;
  /** Starts delivery: the replay, then live events. Call after announcing the subscription. */
  start(): void;
  dispose(): void;
}

export type SubscribeOutcome = { ok: true; subscription: ConversationSubscription } | Extract<CursorCheck, { ok: false }>;

/**
 * Redis came back without its data: the log numbers events again from PostgreSQL's copy of
 * the last seq, so seqs this subscriber was given now name other events. Resuming by seq
 * cannot repair that; the client reloads the conversation and subscribes with its `lastSeq`.
 */
export class EventLogRestartedError extends SwitchyardError<'event_log_restarted'> {
  readonly code = 'event_log_restarted';

  constructor(
    message: string,
    /** The oldest seq the restarted log keeps (the `cursor_expired` answer's `oldestSeq`). */
    readonly oldestSeq: number,
  ) {
    super(message);
  }
}

/**
 * Replay-then-live with no gap and no duplicate. The live listener is registered first; the
 * log is then read up to the present; from there each published event is a hint, delivered
 * only when it is exactly the next seq, and anything else sends us back to the log. Events
 * that arrive while the log is being read are never lost, because the log has them.
 */
export async function subscribeToConversation(
  sources: SubscriptionSources,
  input: {
    conversationId: string;
    after: number | undefined;
    /**
     * `appendedAt` (ms since the epoch) comes with events appended after the subscription was
     * made, for measuring relay lag; a replay of older events has none.
     */
    deliver(json: string, seq: number, appendedAt?: number): void;
    onError(error: Error): void;
  },
): Promise<SubscribeOutcome> {
  const { conversationId } = input;
  let next = 0;
  let highestHint = 0;
  let started = false;
  let reading = false;
  let disposed = false;
  /** The last event delivered, to recognise it in the log after Redis reconnected. */
  let lastDelivered: string | undefined;
  let reconnected = false;
  /** The latest seq when the subscription was made: later events are live, not a replay. */
  let latestAtSubscribe = Number.MAX_SAFE_INTEGER;

  const deliver = (json: string, seq: number, appendedAt?: number) => {
    input.deliver(json, seq, appendedAt);
    lastDelivered = json;
    next = seq + 1;
  };

  const readToPresent = async (): Promise<void> => {
    for (;;) {
      // A hint that arrives while a read is on its way may be for an event appended after the
      // read was served: only one announced before the read began must be in what it returns.
      const announcedBeforeRead = highestHint;
      const { events, full } = await sources.eventLog.read(conversationId, next - 1, sources.page);
      if (disposed) return;
      for (const event of events) {
        if (event.seq < next) continue;
        if (event.seq > next) throw new Error(`the replay log lost events ${next}..${event.seq - 1} (trimmed while being read)`);
        deliver(event.json, event.seq, event.seq > latestAtSubscribe ? event.appendedAt : undefined);
      }
      if (full) continue;
      if (highestHint < next) return;
      if (events.length === 0 && announcedBeforeRead >= next) throw new Error(`event ${next} was announced but is not in the replay log`);
    }
  };

  // After a reconnect the log must still hold, at the last seq delivered here, the very event
  // delivered. A Redis that restarted empty holds another event there, or none yet; without
  // this check the subscriber would silently skip the new events up to its old seq and then
  // receive the rest as if they followed what it has.
  const checkContinuity = async (): Promise<void> => {
    const seen = next - 1;
    if (seen < 1) return;
    if (lastDelivered === undefined) {
      const { latestSeq } = await sources.eventLog.window(conversationId);
      if (latestSeq >= seen) return;
    } else {
      const [kept] = (await sources.eventLog.read(conversationId, seen - 1, { maxEvents: 1 })).events;
      if (kept?.seq === seen && kept.json === lastDelivered) return;
    }
    const window = await sources.eventLog.window(conversationId);
    throw new EventLogRestartedError(
      `the event log of conversation ${conversationId} restarted below seq ${seen} (Redis lost its data): reload the conversation and subscribe with its lastSeq`,
      window.oldestSeq ?? window.latestSeq + 1,
    );
  };

  const catchUp = async (): Promise<void> => {
    if (reading || disposed || !started) return;
    reading = true;
    try {
      do {
        if (reconnected) {
          reconnected = false;
          await checkContinuity();
        }
        await readToPresent();
      } while (reconnected && !disposed);
    } catch (error) {
      if (!disposed) input.onError(coerceError(error));
    } finally {
      reading = false;
    }
  };

  const onLive: LiveListener = (json, seq, appendedAt) => {
    if (disposed) return;
    if (!started || reading) {
      highestHint = Math.max(highestHint, seq);
      return;
    }
    if (seq === next) {
      deliver(json, seq, appendedAt);
    } else if (seq > next) {
      highestHint = Math.max(highestHint, seq);
      void catchUp();
    }
  };

  const stopListening = await sources.liveEvents.listen(conversationId, onLive);
  const stopReconnect = sources.onReconnect?.(() => {
    reconnected = true;
    void catchUp();
  });
  const dispose = () => {
    disposed = true;
    stopListening();
    stopReconnect?.();
  };
  try {
    const window = await sources.eventLog.window(conversationId);
    const cursor = checkCursor({ after: input.after, ...window });
    if (!cursor.ok) {
      dispose();
      return cursor;
    }
    next = cursor.after + 1;
    latestAtSubscribe = window.latestSeq;
    highestHint = Math.max(highestHint, window.latestSeq);
    return {
      ok: true,
      subscription: {
        latestSeq: window.latestSeq,
        start() {
          if (started) return;
          started = true;
          void catchUp();
        },
        dispose,
      },
    };
  } catch (error) {
    dispose();
    throw error;
  }
}
