import type { EventPage } from '../event-log/event-log';

/** Below this a page would take a round trip to Redis for every event or two of a plain answer. */
const MIN_PAGE_BYTES = 16 * 1024;

/**
 * What one read of the event log brings in for a reader whose backlog may reach
 * `maxBufferedBytes` (WS_MAX_BUFFERED_BYTES): a quarter of that, so that the page it is handed
 * and what its socket buffers stay about the allowance together, whatever the events weigh (an
 * event larger than the page comes alone). Pure.
 */
export function replayPage(maxBufferedBytes: number): EventPage {
  return { maxEvents: 500, maxBytes: Math.max(MIN_PAGE_BYTES, Math.floor(maxBufferedBytes / 4)) };
}
