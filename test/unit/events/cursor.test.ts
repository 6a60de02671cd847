import { checkCursor } from '../../../src/events/cursor';

describe('checkCursor', () => {
  it('starts from the oldest kept event when no cursor is given', () => {
    expect(checkCursor({ after: undefined, oldestSeq: 5, latestSeq: 9 })).toEqual({ ok: true, after: 4 });
    expect(checkCursor({ after: undefined, oldestSeq: null, latestSeq: 0 })).toEqual({ ok: true, after: 0 });
    // The log expired but the counter is known: nothing to replay, live from the latest.
    expect(checkCursor({ after: undefined, oldestSeq: null, latestSeq: 7 })).toEqual({ ok: true, after: 7 });
  });

  it('accepts any cursor from just before the oldest kept event up to the latest', () => {
    expect(checkCursor({ after: 4, oldestSeq: 5, latestSeq: 9 })).toEqual({ ok: true, after: 4 });
    expect(checkCursor({ after: 9, oldestSeq: 5, latestSeq: 9 })).toEqual({ ok: true, after: 9 });
    expect(checkCursor({ after: 0, oldestSeq: 1, latestSeq: 1 })).toEqual({ ok: true, after: 0 });
  });

  it('refuses a cursor from the future', () => {
    expect(checkCursor({ after: 10, oldestSeq: 5, latestSeq: 9 })).toMatchObject({ ok: false, code: 'bad_cursor' });
  });

  it('tells a client whose cursor the log no longer keeps where the log starts', () => {
    expect(checkCursor({ after: 3, oldestSeq: 5, latestSeq: 9 })).toMatchObject({ ok: false, code: 'cursor_expired', oldestSeq: 5 });
    expect(checkCursor({ after: 2, oldestSeq: null, latestSeq: 7 })).toMatchObject({ ok: false, code: 'cursor_expired', oldestSeq: 8 });
  });
});
