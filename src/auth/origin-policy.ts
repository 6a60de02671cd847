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
