import { types } from 'node:util';
import { MaxRetriesPerRequestError } from 'ioredis/built/errors';
import ClusterAllFailedError from 'ioredis/built/errors/ClusterAllFailedError';
import { CONNECTION_CLOSED_ERROR_MSG } from 'ioredis/built/utils';
import { DatabaseError } from 'pg';
import { errorMessage, SwitchyardError } from './switchyard-error';

/**
 * Thrown by our own adapters when a store failed for a reason of its connection rather than of
 * the statement: pg's client-side errors carry neither a class nor a code (a query timeout, a
 * connection that ended), so the adapter, which knows where they come from, says so.
 */
export class BackendUnavailableError extends SwitchyardError<'backend_unavailable'> {
  readonly code = 'backend_unavailable';
  constructor(
    readonly backend: 'postgres' | 'redis',
    cause: unknown,
  ) {
    super(`${backend} is unavailable: ${errorMessage(cause)}`, { cause });
    this.name = 'BackendUnavailableError';
  }
}

/** Node socket `errno` codes that mean the server is not there (now). */
const NETWORK_ERRNOS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ECONNABORTED', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * PostgreSQL SQLSTATEs of a server that is not taking work: class 08 (connection exception),
 * 57P01–57P03 (shutting down, crashed, starting), 53300 (too many connections).
 */
function isUnavailableSqlState(code: string): boolean {
  return code.startsWith('08') || code === '57P01' || code === '57P02' || code === '57P03' || code === '53300';
}

/** Redis replies (their first word is the protocol's error code) of a server not serving yet. */
const UNAVAILABLE_REDIS_REPLIES = new Set(['LOADING', 'MASTERDOWN', 'CLUSTERDOWN', 'TRYAGAIN']);

/**
 * ioredis rejects commands on a connection that is down with plain errors; these are its
 * messages (the first is its own exported constant). test/integration/errors provokes each one
 * from a real ioredis, so a new wording fails a test instead of turning an outage into failures.
 */
const IOREDIS_CONNECTION_MESSAGES = new Set([
  CONNECTION_CLOSED_ERROR_MSG,
  "Stream isn't writeable and enableOfflineQueue options is false",
  'Command timed out',
  // A cluster connection: not connected yet (or lost every node), or it lost every node for good.
  "Cluster isn't ready and enableOfflineQueue options is false",
  'None of startup nodes is available',
]);

/**
 * A cluster connection gives up on a command whose slot's master stays down after
 * `maxRedirections` retries, with this message followed by the last error.
 */
const CLUSTER_GAVE_UP = 'Too many Cluster redirections.';

/**
 * Whether an error means Redis or PostgreSQL is down (answer 503, wait, let the client retry)
 * rather than a bug (500). Judged by class, SQLSTATE and errno, through `cause` chains and the
 * errors of an AggregateError (a connect that tried IPv6 and IPv4).
 */
export function isBackendUnavailable(thrown: unknown, depth = 0): boolean {
  // isNativeError: Node's own errors (a socket's) may come from another realm (a vm context).
  if (!(thrown instanceof Error || types.isNativeError(thrown)) || depth > 5) return false;
  if (
    BackendUnavailableError.isInstance(thrown) ||
    thrown instanceof MaxRetriesPerRequestError ||
    thrown instanceof ClusterAllFailedError ||
    // BullMQ's ConnectionClosedError, by the name its constructor sets: importing bullmq for the
    // class would load all of it into the CLI, which never runs a queue.
    thrown.name === 'ConnectionClosedError'
  ) {
    return true;
  }
  const code = (thrown as { code?: unknown }).code;
  if (thrown instanceof DatabaseError) return typeof code === 'string' && isUnavailableSqlState(code);
  if (typeof code === 'string' && NETWORK_ERRNOS.has(code)) return true;
  if (thrown.name === 'ReplyError' && UNAVAILABLE_REDIS_REPLIES.has(thrown.message.split(' ', 1)[0]!)) return true;
  if (IOREDIS_CONNECTION_MESSAGES.has(thrown.message) || thrown.message.startsWith(CLUSTER_GAVE_UP)) return true;
  const inner = (thrown as { errors?: unknown }).errors;
  if (Array.isArray(inner) && inner.some((error) => isBackendUnavailable(error, depth + 1))) return true;
  return isBackendUnavailable(thrown.cause, depth + 1);
}
