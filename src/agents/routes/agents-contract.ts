import { z } from 'zod';
import { documentPaths, jsonResponse } from '../../api/contract/operation';
import { idParams, pageOf, timestamp } from '../../api/contract/shared-schemas';
import { agentConfigSchema, agentPatchSchema } from '../store/agent-config';

export const createAgentSchema = agentConfigSchema.meta({ id: 'AgentConfig', description: 'One version of an agent: `name` and the settings its turns run with.' });
export const patchAgentSchema = agentPatchSchema.meta({
  id: 'AgentPatch',
  description: 'The fields the next version changes; `null` removes one, a field left out is kept from the latest version.',
});
export const restoreAgentSchema = z.strictObject({ version: z.number().int().min(1).meta({ description: 'The version the new one copies.' }) });

export const getAgentQuerySchema = z.strictObject({
  version: z.coerce.number().int().min(1).optional().meta({ description: 'A version of the agent; the latest when absent.' }),
});
export const listAgentsQuerySchema = z.strictObject({
  limit: z.coerce.number().int().min(1).max(100).default(20),
  cursor: z
    .string()
    .regex(/^\d{1,18}$/, 'not a cursor from this API')
    .optional(),
});

export const agentSchema = agentConfigSchema
  .extend({
    id: z.string().meta({ description: '`agent_…`' }),
    version: z.number().int().meta({ description: 'This version; versions never change.' }),
    latestVersion: z.number().int(),
    restoredFrom: z.number().int().nullable().meta({ description: 'A restore: the version this one copies.' }),
    archivedAt: z.nullable(timestamp).meta({ description: 'Archived: new references to it are a 404; what runs on it goes on.' }),
    createdAt: timestamp.check(z.describe('When this version was made.')),
    agentCreatedAt: timestamp.check(z.describe('When version 1 was made.')),
  })
  .meta({ id: 'Agent' });

export const agentPageSchema = pageOf(agentSchema).check(z.meta({ id: 'AgentPage' }));
export const agentVersionsSchema = z.object({ data: z.array(agentSchema) }).meta({ id: 'AgentVersions', description: 'Every version, newest first.' });

const agentId = idParams('agent');

export const agentPaths = documentPaths('Agents', {
  '/v1/agents': {
    post: {
      operationId: 'createAgent',
      summary: 'Make an agent (its version 1)',
      access: 'user',
      jsonBody: createAgentSchema,
      responses: { '201': jsonResponse('The agent.', agentSchema) },
      errors: ['conflict'],
    },
    get: {
      operationId: 'listAgents',
      summary: 'The latest version of each agent not archived, newest first',
      access: 'user',
      requestParams: { query: listAgentsQuerySchema },
      responses: { '200': jsonResponse('A page of agents.', agentPageSchema) },
    },
  },
  '/v1/agents/{id}': {
    get: {
      operationId: 'getAgent',
      summary: 'An agent: its latest version, or `?version=N`',
      access: 'user',
      requestParams: { path: agentId, query: getAgentQuerySchema },
      responses: { '200': jsonResponse('The version.', agentSchema) },
      errors: ['not_found'],
    },
    patch: {
      operationId: 'updateAgent',
      summary: 'Make the next version: the latest with these changes',
      access: 'user',
      requestParams: { path: agentId },
      jsonBody: patchAgentSchema,
      responses: { '200': jsonResponse('The new version.', agentSchema) },
      errors: ['not_found', 'conflict'],
    },
    delete: {
      operationId: 'archiveAgent',
      summary: 'Archive the agent',
      description: 'New references to it are a 404; conversations and schedules already on it go on with its latest version; its versions stay readable.',
      access: 'user',
      requestParams: { path: agentId },
      responses: { '204': { description: 'Archived.' } },
      errors: ['not_found'],
    },
  },
  '/v1/agents/{id}/versions': {
    get: {
      operationId: 'listAgentVersions',
      summary: "The agent's versions, newest first",
      access: 'user',
      requestParams: { path: agentId },
      responses: { '200': jsonResponse('Its versions.', agentVersionsSchema) },
      errors: ['not_found'],
    },
  },
  '/v1/agents/{id}/restore': {
    post: {
      operationId: 'restoreAgent',
      summary: 'Make the next version a copy of an earlier one',
      access: 'user',
      requestParams: { path: agentId },
      jsonBody: restoreAgentSchema,
      responses: { '200': jsonResponse('The new version.', agentSchema) },
      errors: ['not_found', 'conflict'],
    },
  },
});
