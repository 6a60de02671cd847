import { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import { toProviderError } from '../../../src/providers/openai-compatible-provider';
import { ProviderError } from '../../../src/providers/provider-error';

const nothingOfOurs = { idleTimedOut: false, callerAborted: false, idleTimeoutMs: 300 };
/** What the SDK throws for an HTTP error answer whose JSON body is `{error}`. */
const httpError = (status: number, error: object, headers: Record<string, string> = {}) => APIError.generate(status, { error }, undefined, new Headers(headers));

describe('toProviderError', () => {
  it('classifies HTTP answers by status, keeping the status and Retry-After', () => {
    const limited = toProviderError(httpError(429, { message: 'slow down' }, { 'retry-after': '61' }), nothingOfOurs);
    expect(limited).toMatchObject({ kind: 'rate_limited', status: 429, retryAfterMs: 61_000, retryable: true });
    expect(limited.message).toContain('slow down');
    expect(toProviderError(httpError(503, { message: 'overloaded' }), nothingOfOurs)).toMatchObject({ kind: 'server', status: 503, retryable: true });
    expect(toProviderError(httpError(503, {}), nothingOfOurs).retryAfterMs).toBeUndefined();
  });

  it.each([400, 401, 403, 404, 422])('takes a %i as a refusal, not worth retrying', (status) => {
    expect(toProviderError(httpError(status, { message: 'no' }), nothingOfOurs)).toMatchObject({ kind: 'rejected', status, retryable: false });
  });

  it('takes a context-length error as a refusal of its own kind, by its code or by its message', () => {
    const error = httpError(400, { message: 'maximum context length is 8192 tokens', code: 'context_length_exceeded', type: 'invalid_request_error' });
    expect(toProviderError(error, nothingOfOurs)).toMatchObject({ kind: 'context_length_exceeded', retryable: false });
    // vLLM says it in words only.
    const vllm = httpError(400, { message: "This model's maximum context length is 4096 tokens. However, you requested 5000 tokens.", type: 'BadRequestError' });
    expect(toProviderError(vllm, nothingOfOurs)).toMatchObject({ kind: 'context_length_exceeded' });
    expect(toProviderError(httpError(400, { message: 'messages: invalid role' }), nothingOfOurs)).toMatchObject({ kind: 'rejected', retryable: false });
  });

  it('takes an error event inside a 200 stream (an APIError without status) as a retryable stream error', () => {
    const error = new APIError(undefined, { message: 'upstream went away', type: 'server_error' }, undefined, new Headers());
    expect(toProviderError(error, nothingOfOurs)).toMatchObject({ kind: 'stream_error', retryable: true });
  });

  it('takes a failed or cut connection as retryable', () => {
    expect(toProviderError(new APIConnectionError({ message: 'ECONNREFUSED' }), nothingOfOurs).kind).toBe('connection');
    expect(toProviderError(new APIConnectionTimeoutError(), nothingOfOurs).kind).toBe('connection');
    // undici's error for a socket cut mid-body
    expect(toProviderError(new TypeError('terminated'), nothingOfOurs)).toMatchObject({ kind: 'connection', retryable: true });
  });

  it('keeps a failure the stream reader found itself', () => {
    const truncated = new ProviderError('truncated', 'the provider stream ended without a finish_reason');
    expect(toProviderError(truncated, nothingOfOurs)).toBe(truncated);
  });

  // The SDK ends a stream we aborted as if the provider had ended it: the reader then sees a
  // stream without finish_reason. What we did ourselves must win over that.
  it('names our own aborts, whatever the SDK made of them', () => {
    const truncated = new ProviderError('truncated', 'the provider stream ended without a finish_reason');
    expect(toProviderError(truncated, { ...nothingOfOurs, idleTimedOut: true })).toMatchObject({ kind: 'idle_timeout', retryable: true });
    expect(toProviderError(truncated, { ...nothingOfOurs, idleTimedOut: true }).message).toContain('300 ms');
    expect(toProviderError(truncated, { ...nothingOfOurs, callerAborted: true })).toMatchObject({ kind: 'aborted', retryable: false });
    expect(toProviderError(new APIUserAbortError(), { ...nothingOfOurs, idleTimedOut: true }).kind).toBe('idle_timeout');
    expect(toProviderError(new APIUserAbortError(), { ...nothingOfOurs, callerAborted: true }).kind).toBe('aborted');
    // A cancel that lands while the idle timer fires is still a cancel: it must not be retried.
    expect(toProviderError(new APIUserAbortError(), { ...nothingOfOurs, idleTimedOut: true, callerAborted: true }).kind).toBe('aborted');
  });
});
