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

/** What the playground keeps of an agent: enough to list it and to name it, not its instructions. */
export interface AgentSummary {
  id: string;
  name: string;
  latestVersion: number;
}

/**
 * The person's agents (GET /v1/agents, the newest hundred), read with the API key at sign-in: the
 * session token the page keeps may pick an agent but not read the agents' configurations.
 */
export async function listAgents(apiKey: string): Promise<AgentSummary[]> {
  const response = await fetch('/v1/agents?limit=100', { headers: { authorization: `Bearer ${apiKey}` } });
  if (!response.ok) return [];
  const body = (await response.json()) as { data: AgentSummary[] };
  return body.data.map(({ id, name, latestVersion }) => ({ id, name, latestVersion }));
}

/** What the playground reads of a turn (GET /v1/turns/:id). */
export interface TurnSummary {
  usage: { totalTokens: number; costUsd: number };
  agentId?: string | null;
  agentVersion?: number | null;
}

/**
 * Reads ended turns, each once: the usage line and the chat's header read the same turn, and an
 * ended turn no longer changes. A failed read is forgotten, so that the next render tries again.
 */
export function endedTurnReader(token: string): (turnId: string) => Promise<TurnSummary> {
  const read = new Map<string, Promise<TurnSummary>>();
  return (turnId) => {
    let turn = read.get(turnId);
    if (!turn) {
      turn = callApi<TurnSummary>(token, 'GET', `/v1/turns/${encodeURIComponent(turnId)}`);
      read.set(turnId, turn);
      turn.catch(() => read.delete(turnId));
    }
    return turn;
  };
}
