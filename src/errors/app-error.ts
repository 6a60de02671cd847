import { SwitchyardError } from './switchyard-error';

/**
 * An expected failure with a stable code. The HTTP and websocket layers map codes to
 * statuses and frames in one place each (api/error-handler.ts, gateway/client-session.ts).
 */
export type AppErrorCode =
  | 'unauthorized'
  /** A session token that was valid and has expired: the page gets a new one and sends again. */
  | 'token_expired'
  | 'forbidden'
  | 'not_found'
  | 'invalid_json'
  | 'invalid_request'
  /** A field Switchyard does not honour as it is given (OpenAI's `unsupported_parameter`). */
  | 'unsupported_parameter'
  | 'unsupported_media_type'
  | 'payload_too_large'
  | 'conversation_busy'
  | 'idempotency_conflict'
  | 'external_id_conflict'
  | 'already_decided'
  /** The request does not fit the current state of what it names (it would never succeed as it is). */
  | 'conflict'
  | 'rate_limited'
  /** A budget of the user's is reached (docs/API.md, "Usage and budgets"). */
  | 'budget_exceeded'
  | 'unavailable'
  | 'tool_failed'
  | 'internal';

export class AppError extends SwitchyardError<AppErrorCode> {
  constructor(
    readonly code: AppErrorCode,
    message: string,
    readonly details?: unknown,
    /** Seconds, for 429 and 503. */
    readonly retryAfter?: number,
  ) {
    super(message);
    this.name = 'AppError';
  }
}

export const notFound = (what: string) => new AppError('not_found', `${what} not found`);
