import { createParser } from 'eventsource-parser';

/**
 * The `data` of each server-sent event in a response body, in batches: one batch per read from
 * the network, so that a fast provider's many events per read cost one step of the iteration
 * instead of one each. Events without data lines (and comments, such as keep-alive pings) yield
 * nothing; an event cut off by the end of the body is dropped, as the SSE specification says.
 */
export async function* serverSentData(body: AsyncIterable<Uint8Array>): AsyncGenerator<string[]> {
  let batch: string[] = [];
  const parser = createParser({ onEvent: (event) => batch.push(event.data) });
  // Streaming decode: a UTF-8 sequence split between two reads is decoded whole.
  const decoder = new TextDecoder();
  for await (const bytes of body) {
    parser.feed(decoder.decode(bytes, { stream: true }));
    if (batch.length === 0) continue;
    const ready = batch;
    batch = [];
    yield ready;
  }
  parser.feed(decoder.decode());
  if (batch.length > 0) yield batch;
}
