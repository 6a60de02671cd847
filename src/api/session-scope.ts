/**
 * What a session token may do (docs/API.md): read conversations and turns, cancel a turn, get a
 * websocket ticket, and chat through the AI SDK routes. Everything else (posting through the
 * REST API, tools, minting tokens, keys and users) needs the API key itself. Pure.
 */
export function sessionTokenMayUse(method: string, path: string): boolean {
  if (method === 'GET' || method === 'HEAD') return /^\/v1\/(conversations|turns)(\/|$)|^\/api\/chat\/[^/]+\/stream$/.test(path);
  if (method === 'POST') return /^\/v1\/turns\/[^/]+\/cancel$/.test(path) || path === '/v1/ws-tickets' || path === '/api/chat';
  return false;
}
