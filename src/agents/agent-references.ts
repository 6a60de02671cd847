import { notFound } from '../errors/app-error';
import type { Queryable } from '../store/db';
import { parseAgentReference } from './agent-reference';
import type { AgentsRepository } from './store/agents-repository';

/** A reference as a conversation or a turn records it: the agent's id, and its version when pinned. */
export interface ResolvedAgentReference {
  agentId: string;
  /** null: the agent's latest version when each turn is admitted. */
  agentVersion: number | null;
}

/**
 * Checks a new reference to an agent (a conversation's, a turn's, a batch's defaults, a schedule's,
 * a Responses `prompt`): the user's own agent, not archived, the pinned version one it has. Any
 * other is a 404, the same whether the agent is missing, someone else's or archived.
 */
export class AgentReferences {
  constructor(private readonly agents: Pick<AgentsRepository, 'findReferable'>) {}

  async resolve(userId: string, text: string, field = 'agent', db?: Queryable): Promise<ResolvedAgentReference> {
    const reference = parseAgentReference(text, field);
    const found = await this.agents.findReferable(userId, reference, db);
    if (!found) throw notFound(reference.version === null ? 'agent' : 'agent version');
    return { agentId: found.id, agentVersion: found.version };
  }

  /** The same, for a reference that may be absent. */
  async resolveOptional(userId: string, text: string | undefined, field = 'agent'): Promise<ResolvedAgentReference | undefined> {
    return text === undefined ? undefined : this.resolve(userId, text, field);
  }
}
