import { failedRequestStatus, kindForStatus, parseRetryAfter, ProviderError } from '../../../src/providers/provider-error';

describe('kindForStatus', () => {
  it.each([
    [429, 'rate_limited'],
    [408, 'server'],
    [409, 'server'],
    [425, 'server'],
    [500, 'server'],
    [502, 'server'],
    [503, 'server'],
    [504, 'server'],
    [529, 'server'],
    [400, 'rejected'],
    [401, 'rejected'],
    [403, 'rejected'],
    [404, 'rejected'],
    [413, 'rejected'],
    [422, 'rejected'],
  ])('maps %i to %s', (status, kind) => {
    expect(kindForStatus(status)).toBe(kind);
    expect(new ProviderError(kindForStatus(status), 'x', status).retryable).toBe(kind !== 'rejected');
  });
});

describe('parseRetryAfter', () => {
  it('reads fractional seconds and a date in the past as now', () => {
    expect(parseRetryAfter('0.5')).toBe(500);
    expect(parseRetryAfter('0')).toBe(0);
    expect(parseRetryAfter(new Date(1_000).toUTCString(), 5_000)).toBe(0);
  });

  it('ignores what is neither seconds nor a date', () => {
    expect(parseRetryAfter('soon')).toBeUndefined();
    expect(parseRetryAfter('')).toBeUndefined();
    expect(parseRetryAfter(null)).toBeUndefined();
  });
});

describe('failedRequestStatus', () => {
  it.each([
    [new ProviderError('rate_limited', 'slow down', 429), '429'],
    [new ProviderError('rejected', 'no', 401), '4xx'],
    [new ProviderError('server', 'conflict', 409), '4xx'],
    [new ProviderError('server', 'overloaded', 503), '5xx'],
    [new ProviderError('connection', 'refused'), 'no_response'],
    [new ProviderError('idle_timeout', 'silent before its headers'), 'no_response'],
    [new ProviderError('aborted', 'cancelled'), 'aborted'],
  ])('counts %s as %s', (error, status) => {
    expect(failedRequestStatus(error)).toBe(status);
  });
});
