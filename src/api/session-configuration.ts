import type { Principal } from '../auth/principal';
import { AppError } from '../errors/app-error';

/** What a browser could use to make a configuration of its own: its backend's agents set these. */
const BACKEND_FIELDS = ['system', 'model', 'tools'] as const;

/**
 * A session token picks an agent and sets no `system`, `model` or `tools` of its own
 * (docs/API.md, "Agents"): a 400 naming the first such field the body sets. Pure.
 */
export function assertSessionSetsNoConfiguration(principal: Principal, body: Partial<Record<(typeof BACKEND_FIELDS)[number], unknown>>): void {
  if (!principal.viaSession) return;
  const field = BACKEND_FIELDS.find((name) => body[name] !== undefined);
  if (field === undefined) return;
  const message = `a session token sets no ${field} of its own: it picks an agent (agent), which its backend defined with an API key`;
  throw new AppError('invalid_request', message, [{ field, message }]);
}

/**
 * A session token limited to some agents (`POST /v1/session-tokens {agents}`) runs turns on one of
 * them only: a conversation made without an agent, or a turn on another, is a 403. `agentId` is the
 * agent the turn would run on, null for none. Pure.
 */
export function assertSessionMayUseAgent(principal: Principal, agentId: string | null): void {
  if (!principal.agents || (agentId !== null && principal.agents.includes(agentId))) return;
  const allowed = principal.agents.join(', ');
  throw new AppError(
    'forbidden',
    agentId === null ? `this session token runs turns on its agents only (${allowed}): name one` : `this session token may not use agent ${agentId}; it may use ${allowed}`,
  );
}

/** The agent id of a stored reference (`agent_…` or `agent_…@N`), null for none. */
export function agentIdOf(reference: string | null | undefined): string | null {
  return reference ? (reference.split('@')[0] ?? null) : null;
}
