import { z } from 'zod';
import { createUserSchema, userToolsSchema } from '../request-schemas';
import { documentPaths, jsonResponse } from './operation';
import { idParams, timestamp } from './shared-schemas';

export const createdUserSchema = z
  .object({ id: z.string(), name: z.string(), keyId: z.string(), apiKey: z.string().meta({ description: 'Shown this once; only its hash is stored.' }) })
  .meta({ id: 'CreatedUser' });

export const apiKeyListSchema = z
  .object({ data: z.array(z.object({ id: z.string(), prefix: z.string(), createdAt: timestamp, revokedAt: z.nullable(timestamp) })) })
  .meta({ id: 'ApiKeyList', description: "A user's keys: never the keys themselves." });

export const userToolsLimitSchema = z
  .object({ id: z.string(), allowedTools: z.array(z.string()).nullable().meta({ description: 'null: every tool.' }) })
  .meta({ id: 'UserToolsLimit' });

const userId = idParams('user');

export const adminPaths = documentPaths('Admin', {
  '/v1/admin/users': {
    post: {
      operationId: 'createUser',
      summary: 'Make a user and its first API key',
      access: 'admin',
      jsonBody: createUserSchema,
      responses: { '201': jsonResponse('The user, its key and its key id.', createdUserSchema) },
    },
  },
  '/v1/admin/users/{id}/keys': {
    get: {
      operationId: 'listApiKeys',
      summary: "A user's API keys",
      access: 'admin',
      requestParams: { path: userId },
      responses: { '200': jsonResponse('The keys.', apiKeyListSchema) },
    },
  },
  '/v1/admin/users/{id}/tools': {
    put: {
      operationId: 'setUserTools',
      summary: "Limit the tools a user's turns may offer",
      access: 'admin',
      requestParams: { path: userId },
      jsonBody: userToolsSchema,
      responses: { '200': jsonResponse('The limit now.', userToolsLimitSchema) },
    },
  },
});
