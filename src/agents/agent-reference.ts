import { AppError } from '../errors/app-error';

/**
 * A reference to an agent as a conversation, a turn, a batch or a schedule gives it: `agent_…`
 * or the agent's name, its latest version at each turn; with `@N`, version N pinned.
 */
export interface AgentReference {
  /** An id (`agent_…`) or a name. */
  key: string;
  /** null: the latest version when each turn is admitted. */
  version: number | null;
}

const REFERENCE = /^([A-Za-z0-9_.-]{1,100})(?:@([1-9]\d{0,8}))?$/;

/** Parses `agent_…`, `name`, `agent_…@3` or `name@3`; anything else is a 400 on `field`. Pure. */
export function parseAgentReference(text: string, field = 'agent'): AgentReference {
  const match = REFERENCE.exec(text);
  if (!match) throw new AppError('invalid_request', `${field}: not an agent reference`, [{ field, message: 'an agent id or name, optionally @version (agent_…@3)' }]);
  return { key: match[1]!, version: match[2] === undefined ? null : Number(match[2]) };
}

/** A checked reference as it is stored in text (a batch's items): `agent_…` or `agent_…@N`. Pure. */
export function formatAgentReference(reference: { agentId: string; agentVersion: number | null }): string {
  return reference.agentVersion === null ? reference.agentId : `${reference.agentId}@${reference.agentVersion}`;
}

/** The text {@link formatAgentReference} wrote, read back. Pure. */
export function storedAgentReference(text: string): { agentId: string; agentVersion: number | null } {
  const { key, version } = parseAgentReference(text);
  return { agentId: key, agentVersion: version };
}
