import { types } from 'node:util';

/**
 * Why a connection to Redis or PostgreSQL could not be made, in words an operator acts on
 * (by errno, SQLSTATE and Redis error code), and the server's URL without its password.
 */
export function connectionFailureReason(thrown: unknown): string {
  const error = thrown instanceof Error || types.isNativeError(thrown) ? (thrown as Error & { code?: unknown; errors?: unknown[] }) : undefined;
  if (!error) return String(thrown);
  const code = typeof error.code === 'string' ? error.code : undefined;
  if (code === 'ECONNREFUSED') return 'connection refused (is it running, on that host and port?)';
  if (code === 'ETIMEDOUT' || /timeout|timed out/i.test(error.message)) return 'timed out (a firewall, or the wrong host?)';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  if (code === '28P01' || code === '28000' || /^(NOAUTH|WRONGPASS)\b/.test(error.message)) return 'authentication failed (check the user and password in the URL)';
  if (code === '3D000') return 'the database does not exist';
  if (Array.isArray(error.errors) && error.errors.length > 0) return connectionFailureReason(error.errors[0]);
  if (error.cause) return connectionFailureReason(error.cause);
  return error.message;
}

export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    return parsed.toString();
  } catch {
    return '(an unreadable URL)';
  }
}
