import { ProviderError, parseRetryAfter } from '../../../src/providers/provider-error';
import { decideProviderRetry } from '../../../src/turns/provider-retry-policy';

const policy = { maxRetries: 3, baseDelayMs: 100, maxDelayMs: 1000, maxRetryAfterMs: 600_000 };

describe('decideProviderRetry', () => {
  it('does not retry what the provider refuses', () => {
    expect(decideProviderRetry(new ProviderError('rejected', 'bad request', 400), 0, policy)).toMatchObject({
      kind: 'fail',
      code: 'provider_error',
    });
  });

  it('backs off exponentially with jitter, capped', () => {
    const error = new ProviderError('server', '503', 503);
    expect(decideProviderRetry(error, 0, policy, () => 1)).toEqual({ kind: 'retry', delayMs: 100 });
    expect(decideProviderRetry(error, 2, policy, () => 0)).toEqual({ kind: 'retry', delayMs: 200 });
    expect(decideProviderRetry(error, 2, { ...policy, maxDelayMs: 300 }, () => 1)).toEqual({ kind: 'retry', delayMs: 300 });
  });

  it('honours Retry-After beyond the backoff, also past 60 s', () => {
    const error = new ProviderError('rate_limited', '429', 429, 120_000);
    expect(decideProviderRetry(error, 0, policy, () => 0)).toEqual({ kind: 'retry', delayMs: 120_000 });
  });

  it('fails a turn whose provider asks to wait longer than allowed, rather than parking it for a day', () => {
    const error = new ProviderError('rate_limited', '429', 429, 86_400_000);
    expect(decideProviderRetry(error, 0, policy)).toMatchObject({ kind: 'fail', code: 'provider_error', message: expect.stringContaining('86400 s') });
  });

  it('gives up after the last retry', () => {
    expect(decideProviderRetry(new ProviderError('connection', 'reset'), 3, policy)).toMatchObject({ kind: 'fail', code: 'retries_exhausted' });
  });

  it('abandons an aborted completion without an error', () => {
    expect(decideProviderRetry(new ProviderError('aborted', 'cancel'), 0, policy)).toEqual({ kind: 'abandon' });
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter(new Date(10_000).toUTCString(), 4_000)).toBe(6_000);
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter('-3')).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});
