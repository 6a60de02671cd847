import { Router } from 'express';
import { AppError, notFound } from '../../errors/app-error';
import { userIdOf } from '../../api/require-user';
import { sendJson } from '../../api/send-json';
import { assertUsableToolNames, type UsableToolsDeps } from '../../api/usable-tools';
import { parseInput, parseRouteId } from '../../api/validate';
import { patchedConfig, type AgentConfig } from '../store/agent-config';
import type { AgentsRepository, AgentVersion, AppendOutcome } from '../store/agents-repository';
import {
  agentPageSchema,
  agentSchema,
  agentVersionsSchema,
  createAgentSchema,
  getAgentQuerySchema,
  listAgentsQuerySchema,
  patchAgentSchema,
  restoreAgentSchema,
} from './agents-contract';

export interface AgentsRouterDeps {
  agents: AgentsRepository;
  /** An agent's `tools` and `requireApproval` name tools the user may use. */
  usableTools: UsableToolsDeps;
  /** An agent's `model` is one the deployment has (a 400 naming them otherwise). */
  assertModel(model: string): void;
}

/** `/v1/agents` (docs/API.md, "Agents"): versioned configurations of the user's. */
export function agentsRouter(deps: AgentsRouterDeps): Router {
  const router = Router();
  const check = async (userId: string, config: AgentConfig) => {
    if (config.model !== undefined) deps.assertModel(config.model);
    await assertUsableToolNames(deps.usableTools, userId, config.tools);
    await assertUsableToolNames(deps.usableTools, userId, config.requireApproval, 'requireApproval');
  };

  router.post('/', async (req, res) => {
    const config = parseInput(createAgentSchema, req.body);
    await check(userIdOf(res), config);
    const agent = await deps.agents.create(userIdOf(res), config);
    if (!agent) throw nameTaken(config.name);
    sendJson(res, agentSchema, agentView(agent), 201);
  });

  router.get('/', async (req, res) => {
    const query = parseInput(listAgentsQuerySchema, req.query);
    const page = await deps.agents.list(userIdOf(res), { limit: query.limit, ...(query.cursor ? { before: query.cursor } : {}) });
    sendJson(res, agentPageSchema, { data: page.data.map(agentView), nextCursor: page.nextCursor });
  });

  router.get('/:id', async (req, res) => {
    const { version } = parseInput(getAgentQuerySchema, req.query);
    const agent = await deps.agents.version(userIdOf(res), parseRouteId(req.params.id, 'agent'), version ?? null);
    if (!agent) throw notFound(version === undefined ? 'agent' : 'agent version');
    sendJson(res, agentSchema, agentView(agent));
  });

  router.get('/:id/versions', async (req, res) => {
    const versions = await deps.agents.versions(userIdOf(res), parseRouteId(req.params.id, 'agent'));
    if (!versions) throw notFound('agent');
    sendJson(res, agentVersionsSchema, { data: versions.map(agentView) });
  });

  router.patch('/:id', async (req, res) => {
    const id = parseRouteId(req.params.id, 'agent');
    const patch = parseInput(patchAgentSchema, req.body);
    const userId = userIdOf(res);
    // Checked as it will be written: what the patch leaves out comes from the latest version.
    const outcome = await deps.agents.append(userId, id, async (latest) => {
      const next = patchedConfig(latest, patch);
      await check(userId, next);
      return next;
    });
    sendJson(res, agentSchema, agentView(appended(outcome, patch.name)));
  });

  router.post('/:id/restore', async (req, res) => {
    const { version } = parseInput(restoreAgentSchema, req.body);
    const outcome = await deps.agents.append(userIdOf(res), parseRouteId(req.params.id, 'agent'), async (base) => base, version);
    sendJson(res, agentSchema, agentView(appended(outcome)));
  });

  router.delete('/:id', async (req, res) => {
    if (!(await deps.agents.archive(userIdOf(res), parseRouteId(req.params.id, 'agent')))) throw notFound('agent');
    res.status(204).end();
  });

  return router;
}

function appended(outcome: AppendOutcome, name?: string): AgentVersion {
  switch (outcome.kind) {
    case 'appended':
      return outcome.agent;
    case 'missing':
      throw notFound('agent');
    case 'no_such_version':
      throw notFound('agent version');
    case 'archived':
      throw new AppError('conflict', 'the agent is archived: its versions can be read, no new one made');
    case 'name_taken':
      throw nameTaken(name ?? '');
  }
}

const nameTaken = (name: string) =>
  new AppError('conflict', `an agent named ${JSON.stringify(name)} exists already`, [{ field: 'name', message: 'taken by another agent of yours' }]);

function agentView(agent: AgentVersion) {
  return {
    ...agent.config,
    id: agent.id,
    version: agent.version,
    latestVersion: agent.latestVersion,
    restoredFrom: agent.restoredFrom,
    archivedAt: agent.archivedAt,
    createdAt: agent.createdAt,
    agentCreatedAt: agent.agentCreatedAt,
  };
}
