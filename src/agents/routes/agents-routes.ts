import type { RouteFamily } from '../../api/route-family';
import { usableToolsOf, type UserToolsNeeds } from '../../api/usable-tools';
import type { TurnService } from '../../turns/turn-service';
import type { AgentsRepository } from '../store/agents-repository';
import { agentPaths } from './agents-contract';
import { agentsRouter } from './agents-router';

interface AgentsRoutesNeeds extends UserToolsNeeds {
  agents: AgentsRepository;
  turnService: Pick<TurnService, 'assertModel'>;
}

/** `/v1/agents` (docs/API.md, "Agents"): an API key's routes; a session token picks an agent, it makes none. */
export const agentsRoutes: RouteFamily<AgentsRoutesNeeds> = {
  stage: 'user',
  openApi: { tag: { name: 'Agents', description: 'Versioned configurations: conversations, turns, batches and schedules name one (docs/API.md, "Agents").' }, paths: agentPaths },
  mount: (app, needs) => {
    app.use('/v1/agents', agentsRouter({ agents: needs.agents, usableTools: usableToolsOf(needs), assertModel: (model) => needs.turnService.assertModel(model) }));
  },
};
