/** Where a subscription starts, or why it cannot. Pure. */
export type CursorCheck =
  { ok: true; after: number } | { ok: false; code: 'bad_cursor'; message: string } | { ok: false; code: 'cursor_expired'; message: string; oldestSeq: number };

/**
 * `after` is exclusive; absent means from the oldest event the log keeps. A cursor beyond the
 * latest seq is a client bug (`bad_cursor`); one older than the log keeps means the client
 * must reload over HTTP (`cursor_expired`).
 */
export function checkCursor(input: { after: number | undefined; oldestSeq: number | null; latestSeq: number }): CursorCheck {
  const { after, oldestSeq, latestSeq } = input;
  const firstKept = oldestSeq ?? latestSeq + 1;
  if (after === undefined) return { ok: true, after: firstKept - 1 };
  if (after > latestSeq) {
    return { ok: false, code: 'bad_cursor', message: `after=${after} is beyond the conversation's latest seq ${latestSeq}` };
  }
  if (after < firstKept - 1) {
    return {
      ok: false,
      code: 'cursor_expired',
      message: `events after ${after} are no longer kept; reload the conversation and subscribe with after: lastSeq`,
      oldestSeq: firstKept,
    };
  }
  return { ok: true, after };
}
