import { SwitchyardError } from '../errors/switchyard-error';

/**
 * Why a completion failed, decided once here so the turn engine only asks `retryable`.
 * - rate_limited / server / connection / idle_timeout / truncated / stream_error: worth another attempt;
 * - rejected: the provider will not accept this request (400, 401, 403, 404, 422);
 * - context_length_exceeded: the request does not fit the model's window (a target with a larger one may take it);
 * - aborted: we aborted it ourselves (cancel, shutdown, lost lock).
 */
export const PROVIDER_ERROR_KINDS = [
  'rate_limited',
  'server',
  'connection',
  'idle_timeout',
  'truncated',
  'stream_error',
  'rejected',
  'context_length_exceeded',
  'aborted',
] as const;
export type ProviderErrorKind = (typeof PROVIDER_ERROR_KINDS)[number];

export class ProviderError extends SwitchyardError<'provider_failed'> {
  /** One code for all: `kind` says why. */
  readonly code = 'provider_failed';

  constructor(
    readonly kind: ProviderErrorKind,
    message: string,
    readonly status?: number,
    /** From the provider's `Retry-After`, when it sent one. */
    readonly retryAfterMs?: number,
  ) {
    super(message);
    this.name = 'ProviderError';
  }

  get retryable(): boolean {
    return isRetryableKind(this.kind);
  }
}

export function isRetryableKind(kind: ProviderErrorKind): boolean {
  return kind !== 'rejected' && kind !== 'context_length_exceeded' && kind !== 'aborted';
}

/**
 * Whether a refusal says the request is longer than the model's window: OpenAI and Groq say so
 * with the code `context_length_exceeded`; vLLM, llama.cpp and others only in the message.
 */
export function saysContextLengthExceeded(status: number, code: unknown, message: string): boolean {
  if (status !== 400 && status !== 413 && status !== 422) return false;
  return code === 'context_length_exceeded' || /context[ _-]?length|context window|maximum context/i.test(message);
}

const RETRYABLE_STATUSES = new Set([408, 409, 425, 429]);

/** Maps an HTTP status from the provider to an error kind. */
export function kindForStatus(status: number): ProviderErrorKind {
  if (status === 429) return 'rate_limited';
  if (status >= 500 || RETRYABLE_STATUSES.has(status)) return 'server';
  return 'rejected';
}

/**
 * What a completion request got back, as metrics count it: the class of the provider's HTTP
 * answer (`2xx` once its headers came, whatever the stream did next), `no_response` when none
 * came (connection refused or cut, silent past the idle timeout), or `aborted` by us first.
 */
export const PROVIDER_REQUEST_STATUSES = ['2xx', '429', '4xx', '5xx', 'no_response', 'aborted'] as const;
export type ProviderRequestStatus = (typeof PROVIDER_REQUEST_STATUSES)[number];

/** The status of a request that failed before its answer's headers. */
export function failedRequestStatus(error: ProviderError): ProviderRequestStatus {
  if (error.kind === 'aborted') return 'aborted';
  if (error.status === undefined) return 'no_response';
  if (error.status === 429) return '429';
  return error.status >= 500 ? '5xx' : '4xx';
}

/** `Retry-After` is either seconds or an HTTP date; anything else is ignored. */
export function parseRetryAfter(value: string | null | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  // A number is seconds (a negative one is nonsense, not a date in year -3).
  if (/^\s*-?\d+(\.\d+)?\s*$/.test(value)) {
    const seconds = Number(value);
    return seconds >= 0 ? Math.round(seconds * 1000) : undefined;
  }
  const date = Date.parse(value);
  if (Number.isFinite(date)) return Math.max(0, date - now);
  return undefined;
}
