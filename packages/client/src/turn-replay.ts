import { isEventEnvelope, isServerFrame, type SwitchyardEvent } from '@switchyard/protocol';
import { createParser } from 'eventsource-parser';
import { openStream, type HttpConnection } from './http-api.js';

/**
 * The turn's events with a seq below `before`, from the server's replay log
 * (`GET /v1/turns/:id/events`): what a subscription that began in the middle of the turn did not
 * see. When the log no longer keeps the turn's first events, from the oldest it keeps.
 */
export async function replayTurnEvents(connection: HttpConnection, turnId: string, before: number): Promise<SwitchyardEvent[]> {
  const replayed = await readReplay(connection, turnId, before, undefined);
  if (replayed.kind === 'events') return replayed.events;
  return (await readReplay(connection, turnId, before, replayed.oldestSeq - 1)).events;
}

type Replay = { kind: 'events'; events: SwitchyardEvent[] } | { kind: 'expired'; oldestSeq: number; events: [] };

/** Reads the stream until it reaches `before` (then lets it go: the rest is live) or ends. */
async function readReplay(connection: HttpConnection, turnId: string, before: number, after: number | undefined): Promise<Replay> {
  const query = after === undefined ? '' : `?lastEventId=${after}`;
  const reader = (await openStream(connection, `/v1/turns/${encodeURIComponent(turnId)}/events${query}`)).getReader();
  const events: SwitchyardEvent[] = [];
  let outcome: Replay | undefined;
  const parser = createParser({
    onEvent: (message) => {
      if (outcome) return;
      const data: unknown = JSON.parse(message.data);
      if (message.event === 'error') {
        const oldestSeq = (data as { code?: string; oldestSeq?: number }).oldestSeq;
        outcome = after === undefined && typeof oldestSeq === 'number' ? { kind: 'expired', oldestSeq, events: [] } : { kind: 'events', events };
        return;
      }
      // One check for what the server sends: an event is what a websocket `event` frame carries.
      // One this client cannot read (a newer server's) is passed over, but its seq still ends the replay.
      if (!isEventEnvelope(data)) return;
      if (data.seq >= before) outcome = { kind: 'events', events };
      else if (isServerFrame({ type: 'event', event: data })) events.push(data as SwitchyardEvent);
    },
  });
  const decoder = new TextDecoder();
  try {
    while (!outcome) {
      const { value, done } = await reader.read();
      if (done) break;
      parser.feed(decoder.decode(value, { stream: true }));
    }
  } finally {
    void reader.cancel().catch(() => undefined);
  }
  return outcome ?? { kind: 'events', events };
}
