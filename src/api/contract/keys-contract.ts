import { z } from 'zod';
import type { ApiKeyInfo } from '../../store/users-repository';
import { createApiKeySchema } from '../request-schemas';
import { documentPaths, jsonResponse } from './operation';
import { idParams, timestamp } from './shared-schemas';

export const apiKeySchema = z
  .object({
    id: z.string(),
    name: z.string().nullable().meta({ description: 'What its owner called it; null when it was given none.' }),
    prefix: z.string().meta({ description: "The key's first characters, to tell keys apart." }),
    createdAt: timestamp,
    lastUsedAt: z.nullable(timestamp).meta({ description: 'To the minute; null until first used.' }),
    revokedAt: z.optional(timestamp).meta({ description: 'Only on a revoked key.' }),
  })
  .meta({ id: 'ApiKey', description: 'An API key: never the key itself, only its hash is stored.' });

export const apiKeyListSchema = z.object({ data: z.array(apiKeySchema) }).meta({ id: 'ApiKeyList', description: 'Oldest first, revoked ones included.' });

export const createdApiKeySchema = z
  .object({ id: z.string(), name: z.string().nullable(), apiKey: z.string().meta({ description: 'Shown this once; only its hash is stored.' }) })
  .meta({ id: 'CreatedApiKey' });

/** A key as the key lists show it (the user's and the admin's alike). */
export function listedKey(key: ApiKeyInfo): z.infer<typeof apiKeySchema> {
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    createdAt: key.createdAt,
    lastUsedAt: key.lastUsedAt,
    ...(key.revokedAt ? { revokedAt: key.revokedAt } : {}),
  };
}

const keyId = idParams('key');

export const keysPaths = documentPaths('Keys', {
  '/v1/keys': {
    get: {
      operationId: 'listOwnKeys',
      summary: 'Your API keys',
      access: 'user',
      responses: { '200': jsonResponse('The keys.', apiKeyListSchema) },
    },
    post: {
      operationId: 'createOwnKey',
      summary: 'Make another API key for yourself',
      access: 'user',
      jsonBody: createApiKeySchema,
      responses: { '201': jsonResponse('The key, shown this once.', createdApiKeySchema) },
    },
  },
  '/v1/keys/{id}': {
    delete: {
      operationId: 'revokeOwnKey',
      summary: 'Revoke one of your keys, at once',
      description: 'Idempotent: a key already revoked is answered as it is. A key cannot revoke itself while it is your last active one (409 `conflict`).',
      access: 'user',
      requestParams: { path: keyId },
      responses: { '200': jsonResponse('The key, revoked.', apiKeySchema) },
      errors: ['not_found', 'conflict'],
    },
  },
});
