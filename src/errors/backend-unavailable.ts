/** PostgreSQL SQLSTATE classes and socket codes that mean "the server is not there right now". */
const UNAVAILABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  '57P01', // admin_shutdown
  '57P02', // crash_shutdown
  '57P03', // cannot_connect_now
  '08000',
  '08001',
  '08003',
  '08004',
  '08006', // connection exceptions
]);

/**
 * What ioredis and pg say when their server is unreachable (they carry no code for these), and
 * PostgreSQL's words for the coded states above, so that a message alone (a failed job's
 * `failedReason`) can be classified too.
 */
const UNAVAILABLE_MESSAGES =
  /Stream isn't writeable|enableOfflineQueue|Connection is closed|Reached the max retries per request|timeout exceeded when trying to connect|Connection terminated|connect ETIMEDOUT|ECONNREFUSED|ECONNRESET|Command timed out|Query read timeout|terminating connection due to administrator command|the database system is (starting up|shutting down|in recovery mode)|not queryable/i;

/**
 * Whether an error means Redis or PostgreSQL is down (answer 503 and let the client retry)
 * rather than a bug (500).
 */
export function isBackendUnavailable(thrown: unknown): boolean {
  if (!(thrown instanceof Error)) return false;
  const code = (thrown as { code?: unknown }).code;
  if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) return true;
  if (thrown.name === 'MaxRetriesPerRequestError') return true;
  return UNAVAILABLE_MESSAGES.test(thrown.message);
}

/** The same judgement from an error's message alone (what BullMQ keeps of a failed job). */
export function isBackendUnavailableMessage(message: string | undefined): boolean {
  return message !== undefined && UNAVAILABLE_MESSAGES.test(message);
}
