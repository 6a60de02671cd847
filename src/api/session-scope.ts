/** What a session token may do, in words, for the refusals of every transport. */
export const SESSION_TOKEN_SCOPE = 'a session token may read conversations and turns, cancel turns, decide tool approvals, get websocket tickets and use /api/chat';

/**
 * What a session token may do (docs/API.md): read conversations and turns, cancel a turn,
 * decide a tool approval (and list the pending ones), get a websocket ticket, and chat through
 * the AI SDK routes. Everything else (posting through the
 * REST API, tools, minting tokens, keys and users) needs the API key itself. Pure.
 */
export function sessionTokenMayUse(method: string, path: string): boolean {
  if (method === 'GET' || method === 'HEAD') return /^\/v1\/(conversations|turns|approvals)(\/|$)|^\/api\/chat\/[^/]+\/(stream|messages)$/.test(path);
  if (method === 'POST') return /^\/v1\/turns\/[^/]+\/(cancel|approvals)$/.test(path) || path === '/v1/ws-tickets' || path === '/api/chat';
  return false;
}

/**
 * What a browser app on another origin may call (CORS): what its session token may use, and
 * minting one, for a page that exchanges a key a person pastes (as the playground does). The
 * rest needs the API key, which belongs on a server, so it is not opened to browsers. Pure.
 */
export function crossOriginMayUse(method: string, path: string): boolean {
  return sessionTokenMayUse(method, path) || (method === 'POST' && path === '/v1/session-tokens');
}

/**
 * Whether a session token may follow this on the websocket: exactly when it may read the HTTP
 * route that serves the same, so that its scope is the same on every transport (a batch's
 * progress, `GET /v1/batches/:id/events`, needs the API key). Pure.
 */
export function sessionTokenMayFollow(subject: { conversationId: string } | { batchId: string }): boolean {
  const path = 'batchId' in subject ? `/v1/batches/${encodeURIComponent(subject.batchId)}/events` : `/v1/conversations/${encodeURIComponent(subject.conversationId)}`;
  return sessionTokenMayUse('GET', path);
}
