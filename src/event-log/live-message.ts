/** A published event as gateways pass it on: the stored JSON, its seq, and when it was appended. */
export interface LiveMessage {
  json: string;
  seq: number;
  /** ms since the epoch (Redis's clock); absent in messages of producers that predate it. */
  appendedAt?: number;
}

const HEAD = /^\{"seq":(\d+),(?:"at":(\d+),)?/;

/**
 * Reads a message of a conversation's channel, `{"seq":N,"at":T,…}` (see append-events-6.lua),
 * and takes `"at":T,` out, so that a live event is the very text the log replays. Anything
 * else has seq 0 (which no subscriber waits for).
 */
export function parseLiveMessage(message: string): LiveMessage {
  const head = HEAD.exec(message);
  if (!head) return { json: message, seq: 0 };
  const seq = Number(head[1]);
  if (head[2] === undefined) return { json: message, seq };
  return { json: `{"seq":${head[1]},${message.slice(head[0].length)}`, seq, appendedAt: Number(head[2]) };
}
