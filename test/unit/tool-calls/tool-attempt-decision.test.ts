import { decideAfterAttempt } from '../../../src/tool-calls/tool-attempt-decision';

const failure = (retryable: boolean) => ({ ok: false as const, error: { code: 'http_error', message: '503 Service Unavailable', retryable, status: 503 } });

describe('decideAfterAttempt', () => {
  it('stores a result, whatever retries are left', () => {
    expect(decideAfterAttempt({ ok: true, result: { value: 42 } }, 1, 2)).toEqual({ kind: 'settle', settlement: { status: 'succeeded', result: { value: 42 } } });
  });

  it('runs a retryable failure again while the tool has retries left, 500 ms then doubling', () => {
    expect(decideAfterAttempt(failure(true), 1, 2)).toEqual({
      kind: 'retry',
      delayMs: 500,
      error: { code: 'http_error', message: '503 Service Unavailable' },
    });
    expect(decideAfterAttempt(failure(true), 2, 2)).toMatchObject({ kind: 'retry', delayMs: 1000 });
  });

  it('stores a retryable failure once its retries are spent, without the retryable hint but with its other fields', () => {
    expect(decideAfterAttempt(failure(true), 3, 2)).toEqual({
      kind: 'settle',
      settlement: { status: 'failed', error: { code: 'http_error', message: '503 Service Unavailable', status: 503 } },
    });
  });

  it('never runs again a failure that is not retryable', () => {
    expect(decideAfterAttempt(failure(false), 1, 5)).toMatchObject({ kind: 'settle', settlement: { status: 'failed' } });
  });

  it('gives a tool without retries one attempt', () => {
    expect(decideAfterAttempt(failure(true), 1, 0)).toMatchObject({ kind: 'settle' });
  });
});
