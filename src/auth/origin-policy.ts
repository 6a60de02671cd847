import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';

/**
 * Whether a browser's Origin may connect (a websocket handshake) or call (CORS). Browsers always send Origin; other
 * clients usually do not, and are let in (they authenticate like any API client). With no
 * allow-list, only the API's own origin is allowed. Pure.
 */
export function isOriginAllowed(origin: string | undefined, host: string | undefined, allowedOrigins: readonly string[]): boolean {
  if (origin === undefined) return true;
  if (allowedOrigins.includes('*')) return true;
  if (allowedOrigins.length > 0) return allowedOrigins.includes(origin);
  try {
    return host !== undefined && new URL(origin).host === host;
  } catch {
    return false;
  }
}

/**
 * Why a browser's Origin was refused, saying what to set: a developer meets this first as a
 * failed preflight, so it names ALLOWED_ORIGINS and the value that would let the origin in. Pure.
 */
export function originRefusal(origin: string, host: string | undefined, allowedOrigins: readonly string[]): string {
  const fix = `set ALLOWED_ORIGINS to a comma-separated list of origins that includes ${origin} (or * for any)`;
  if (allowedOrigins.length === 0) {
    return `a browser app at ${origin} may not call this API: ALLOWED_ORIGINS is not set, so only pages this API serves (${host ?? 'its own host'}) may; ${fix}`;
  }
  return `a browser app at ${origin} may not call this API: ALLOWED_ORIGINS (${allowedOrigins.join(',')}) does not include it; ${fix}`;
}

/** Refused origins remembered, so that each is logged once; past this many, the oldest is forgotten. */
const REMEMBERED_REFUSED_ORIGINS = 1_000;

/**
 * Logs an origin's refusal (the reason, naming ALLOWED_ORIGINS) the first time it is refused: a developer
 * whose app is refused learns what to set from the server's log too, and a page retrying in a loop
 * does not flood it. CORS and the websocket handshake keep one each.
 */
export function refusedOriginLog(logger: Logger): (origin: string, host: string | undefined, allowedOrigins: readonly string[]) => string {
  const logged = new LRUCache<string, true>({ max: REMEMBERED_REFUSED_ORIGINS });
  return (origin, host, allowedOrigins) => {
    const reason = originRefusal(origin, host, allowedOrigins);
    if (!logged.has(origin)) {
      logged.set(origin, true);
      logger.warn({ origin, setting: 'ALLOWED_ORIGINS' }, reason);
    }
    return reason;
  };
}
