import { Router } from 'express';
import { AppError, notFound } from '../errors/app-error';
import type { ApiKeyInfo, CreatedApiKey, OwnKeyRevocation } from '../store/users-repository';
import { apiKeyListSchema, apiKeySchema, createdApiKeySchema, listedKey } from './contract/keys-contract';
import { createApiKeySchema } from './request-schemas';
import { principalOf, userIdOf } from './require-user';
import { sendJson } from './send-json';
import { parseInput, parseRouteId } from './validate';

export interface KeysRouterDeps {
  users: {
    listApiKeys(userId: string): Promise<ApiKeyInfo[]>;
    createApiKey(userId: string, name: string | null): Promise<CreatedApiKey>;
    revokeOwnApiKey(userId: string, keyId: string, byKeyId: string): Promise<OwnKeyRevocation>;
  };
  /** After a revocation is committed: refused at once here, and the other API processes told. */
  afterRevocation(keyId: string): Promise<void>;
}

/** `/v1/keys`: a user's own API keys (docs/API.md, "Users and auth"). Session tokens may not use them. */
export function keysRouter(deps: KeysRouterDeps): Router {
  const router = Router();
  router.get('/', async (_req, res) => {
    const keys = await deps.users.listApiKeys(userIdOf(res));
    sendJson(res, apiKeyListSchema, { data: keys.map(listedKey) });
  });
  router.post('/', async (req, res) => {
    const { name } = parseInput(createApiKeySchema, req.body);
    const key = await deps.users.createApiKey(userIdOf(res), name ?? null);
    sendJson(res, createdApiKeySchema, { id: key.id, name: key.name, apiKey: key.apiKey }, 201);
  });
  router.delete('/:id', async (req, res) => {
    const keyId = parseRouteId(req.params.id, 'key');
    const { userId, keyId: byKeyId } = principalOf(res);
    const outcome = await deps.users.revokeOwnApiKey(userId, keyId, byKeyId);
    switch (outcome.kind) {
      case 'not_found':
        throw notFound('key');
      case 'last_key':
        throw new AppError('conflict', 'this is your last active key: make another one (POST /v1/keys) before revoking this one');
      case 'revoked':
        if (outcome.now) await deps.afterRevocation(keyId);
        sendJson(res, apiKeySchema, listedKey(outcome.key));
    }
  });
  return router;
}
