import type { Conversation } from '@switchyard/protocol';

/** The few REST calls the playground makes besides `/api/chat`, with its session token. */

export class SessionExpiredError extends Error {}

export async function mintSessionToken(apiKey: string): Promise<{ token: string; expiresAt: string }> {
  const response = await fetch('/v1/session-tokens', {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: '{}',
  });
  const body = await response.json();
  if (!response.ok) throw new Error(body?.error?.message ?? `the key was refused (${response.status})`);
  return body;
}

export async function callApi<T>(token: string, method: string, path: string): Promise<T> {
  const response = await fetch(path, { method, headers: { authorization: `Bearer ${token}` } });
  if (response.status === 401) throw new SessionExpiredError('the session ended: paste the API key again');
  const body = await response.json();
  if (!response.ok) throw new Error(body?.error?.message ?? `${method} ${path} answered ${response.status}`);
  return body as T;
}

/** What the sidebar reads of a listed conversation. */
export type ConversationSummary = Pick<Conversation, 'id' | 'externalId' | 'title' | 'source' | 'createdAt'>;
