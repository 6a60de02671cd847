import { types } from 'node:util';
import { errorMessage } from './switchyard-error';

/**
 * Why a connection to Redis or PostgreSQL could not be made, in words an operator acts on
 * (by errno, SQLSTATE and Redis error code). `refused`: the server answered and said no (a
 * password, a database that does not exist), so the fix is the URL, not starting the server.
 */
export interface ConnectionFailure {
  reason: string;
  refused: boolean;
}

export function describeConnectionFailure(thrown: unknown): ConnectionFailure {
  const error = thrown instanceof Error || types.isNativeError(thrown) ? (thrown as Error & { code?: unknown; errors?: unknown[] }) : undefined;
  if (!error) return { reason: errorMessage(thrown), refused: false };
  const code = typeof error.code === 'string' ? error.code : undefined;
  if (code === 'ECONNREFUSED') return { reason: 'connection refused (is it running, on that host and port?)', refused: false };
  if (code === 'ETIMEDOUT' || /timeout|timed out/i.test(error.message)) return { reason: 'timed out (a firewall, or the wrong host?)', refused: false };
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return { reason: 'host not found', refused: false };
  if (code === '28P01' || code === '28000' || /^(NOAUTH|WRONGPASS)\b/.test(error.message)) {
    return { reason: 'authentication failed (check the user and password in the URL)', refused: true };
  }
  if (code === '3D000') return { reason: 'the database does not exist (create it, or name another in the URL)', refused: true };
  if (Array.isArray(error.errors) && error.errors.length > 0) return describeConnectionFailure(error.errors[0]);
  if (error.cause) return describeConnectionFailure(error.cause);
  return { reason: error.message, refused: false };
}

export const connectionFailureReason = (thrown: unknown): string => describeConnectionFailure(thrown).reason;

/**
 * The one line a start ends with when a store cannot be used: which one, why, and what to do
 * (start it, or fix the setting that names it).
 */
export function unusableStoreLine(store: string, failure: ConnectionFailure, startAdvice: string): string {
  return failure.refused ? `${store} refused the connection: ${failure.reason}` : `${store} did not answer: ${failure.reason}. ${startAdvice}`;
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
