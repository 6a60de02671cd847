/**
 * An error answer in OpenAI's shape. A value, not a thrown Error: every failure the scripted
 * model reports is an expected outcome of the request, and the server maps it to one response.
 */
export interface OpenAiError {
  status: number;
  message: string;
  type: string;
  param: string | null;
  code: string | null;
  /** Sent as a `Retry-After` header when set. */
  retryAfterSeconds?: number;
}

/** The body OpenAI sends with every error status. */
export function errorBody(error: OpenAiError): { error: { message: string; type: string; param: string | null; code: string | null } } {
  return { error: { message: error.message, type: error.type, param: error.param, code: error.code } };
}

export function invalidRequest(message: string, param: string | null = null, code: string | null = null): OpenAiError {
  return { status: 400, message, type: 'invalid_request_error', param, code };
}

/** The `type` OpenAI-compatible providers use for a status, so that clients classify scripted errors as real ones. */
export function errorTypeForStatus(status: number): string {
  if (status === 401) return 'authentication_error';
  if (status === 403) return 'permission_error';
  if (status === 404) return 'not_found_error';
  if (status === 429) return 'rate_limit_error';
  return status >= 500 ? 'server_error' : 'invalid_request_error';
}
