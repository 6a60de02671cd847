import { z } from 'zod';
import { createApiKeySchema, createUserSchema, userToolsSchema } from '../request-schemas';
import { apiKeyListSchema, apiKeySchema, createdApiKeySchema } from './keys-contract';
import { documentPaths, jsonResponse } from './operation';
import { idParams, timestamp } from './shared-schemas';

export const createdUserSchema = z
  .object({ id: z.string(), name: z.string(), keyId: z.string(), apiKey: z.string().meta({ description: 'Shown this once; only its hash is stored.' }) })
  .meta({ id: 'CreatedUser' });

export const userListSchema = z
  .object({
    data: z.array(
      z.object({
        id: z.string(),
        name: z.string(),
        allowedTools: z.array(z.string()).nullable().meta({ description: 'null: every tool.' }),
        createdAt: timestamp,
      }),
    ),
  })
  .meta({ id: 'UserList', description: 'Every user, oldest first.' });

/** A key as the admin sees it: whose it is too. */
export const adminKeySchema = apiKeySchema.extend({ userId: z.string() }).meta({ id: 'AdminApiKey' });

export const userToolsLimitSchema = z
  .object({ id: z.string(), allowedTools: z.array(z.string()).nullable().meta({ description: 'null: every tool.' }) })
  .meta({ id: 'UserToolsLimit' });

const userId = idParams('user');
const keyId = idParams('key');

export const adminPaths = documentPaths('Admin', {
  '/v1/admin/users': {
    post: {
      operationId: 'createUser',
      summary: 'Make a user and its first API key',
      access: 'admin',
      jsonBody: createUserSchema,
      responses: { '201': jsonResponse('The user, its key and its key id.', createdUserSchema) },
    },
    get: {
      operationId: 'listUsers',
      summary: 'Every user',
      access: 'admin',
      responses: { '200': jsonResponse('The users.', userListSchema) },
    },
  },
  '/v1/admin/users/{id}/keys': {
    get: {
      operationId: 'listApiKeys',
      summary: "A user's API keys",
      access: 'admin',
      requestParams: { path: userId },
      responses: { '200': jsonResponse('The keys, oldest first, revoked ones included.', apiKeyListSchema) },
    },
    post: {
      operationId: 'createApiKey',
      summary: 'Another API key for a user',
      access: 'admin',
      requestParams: { path: userId },
      jsonBody: createApiKeySchema,
      responses: { '201': jsonResponse('The key, shown this once.', createdApiKeySchema) },
    },
  },
  '/v1/admin/keys/{id}': {
    delete: {
      operationId: 'revokeApiKey',
      summary: 'Revoke any key, at once',
      description: "A user's last key too. Idempotent: a key already revoked is answered as it is.",
      access: 'admin',
      requestParams: { path: keyId },
      responses: { '200': jsonResponse('The key, revoked.', adminKeySchema) },
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
