/** What a session token may do, in words, for the refusals of every transport. */
export const SESSION_TOKEN_SCOPE =
  'a session token may read conversations and turns, create conversations and post turns, cancel turns, answer client tools, decide tool approvals, get websocket tickets and use /api/chat';

/**
 * What a session token may do (docs/API.md, "AI SDK compatible routes"): read conversations and
 * turns, create a conversation and post a turn (edits and regenerations are turns too; the
 * tools they name are held to the user's, as with the key), cancel a turn, answer a client
 * tool, decide a tool approval (and list the pending ones), get a websocket ticket, and chat
 * through the AI SDK routes. Everything else (deleting and forking, tools, batches, webhooks,
 * minting tokens, keys and users) needs the API key itself. Pure.
 */
export function sessionTokenMayUse(method: string, path: string): boolean {
  if (method === 'GET' || method === 'HEAD') return /^\/v1\/(conversations|turns|approvals)(\/|$)|^\/api\/chat\/[^/]+\/(stream|messages)$/.test(path);
  if (method === 'POST') {
    return /^\/v1\/conversations(\/[^/]+\/turns)?$|^\/v1\/turns\/[^/]+\/(cancel|approvals|tool-results)$/.test(path) || path === '/v1/ws-tickets' || path === '/api/chat';
  }
  return false;
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
