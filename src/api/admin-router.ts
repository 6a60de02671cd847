import { Router } from 'express';
import { AppError, notFound } from '../errors/app-error';
import type { ApiKeyInfo, CreatedApiKey, User } from '../store/users-repository';
import { unknownToolNames, unknownToolsMessage } from '../tools/known-tools';
import { createApiKeySchema, createUserSchema, userToolsSchema } from './request-schemas';
import { parseInput, parseRouteId } from './validate';
import { adminKeySchema, createdUserSchema, userListSchema, userToolsLimitSchema } from './contract/admin-contract';
import { apiKeyListSchema, createdApiKeySchema, listedKey } from './contract/keys-contract';
import { sendJson } from './send-json';

export interface AdminRouterDeps {
  users: {
    createUserWithKey(name: string): Promise<{ id: string; name: string; keyId: string; apiKey: string }>;
    setAllowedTools(userId: string, tools: string[] | null): Promise<boolean>;
    getUser(userId: string): Promise<User | null>;
    listUsers(): Promise<User[]>;
    listApiKeys(userId: string): Promise<ApiKeyInfo[]>;
    createApiKey(userId: string, name: string | null): Promise<CreatedApiKey>;
    getApiKey(keyId: string): Promise<ApiKeyInfo | null>;
    revokeApiKey(keyId: string): Promise<boolean>;
  };
  /** Every tool the service knows, for refusing a limit that names another. */
  tools: { list(): { name: string }[] };
  /** After a revocation is committed: refused at once here, and the other API processes told. */
  afterRevocation(keyId: string): Promise<void>;
}

/** The admin routes, mounted behind requireAdmin and the body parser. */
export function adminRouter(deps: AdminRouterDeps): Router {
  const router = Router();
  router.post('/users', async (req, res) => {
    const { name } = parseInput(createUserSchema, req.body);
    const user = await deps.users.createUserWithKey(name);
    sendJson(res, createdUserSchema, { id: user.id, name: user.name, keyId: user.keyId, apiKey: user.apiKey }, 201);
  });
  router.get('/users', async (_req, res) => {
    sendJson(res, userListSchema, { data: await deps.users.listUsers() });
  });
  router.get('/users/:id/keys', async (req, res) => {
    const userId = parseRouteId(req.params.id, 'user');
    if (!(await deps.users.getUser(userId))) throw notFound('user');
    // Never the key itself (only its hash is stored): its id, name, first characters and dates.
    const keys = await deps.users.listApiKeys(userId);
    sendJson(res, apiKeyListSchema, { data: keys.map(listedKey) });
  });
  router.post('/users/:id/keys', async (req, res) => {
    const userId = parseRouteId(req.params.id, 'user');
    const { name } = parseInput(createApiKeySchema, req.body);
    if (!(await deps.users.getUser(userId))) throw notFound('user');
    const key = await deps.users.createApiKey(userId, name ?? null);
    sendJson(res, createdApiKeySchema, { id: key.id, name: key.name, apiKey: key.apiKey }, 201);
  });
  // The admin may revoke any key, a user's last one too; a key already revoked is answered as it is.
  router.delete('/keys/:id', async (req, res) => {
    const keyId = parseRouteId(req.params.id, 'key');
    const revokedNow = await deps.users.revokeApiKey(keyId);
    if (revokedNow) await deps.afterRevocation(keyId);
    const key = await deps.users.getApiKey(keyId);
    if (!key) throw notFound('key');
    sendJson(res, adminKeySchema, { ...listedKey(key), userId: key.userId });
  });
  router.put('/users/:id/tools', async (req, res) => {
    const userId = parseRouteId(req.params.id, 'user');
    const { tools } = parseInput(userToolsSchema, req.body);
    if (tools) {
      const known = { names: deps.tools.list().map((tool) => tool.name) };
      const unknown = unknownToolNames(tools, known);
      if (unknown.length > 0) {
        throw new AppError(
          'invalid_request',
          unknownToolsMessage(unknown, known),
          unknown.map((name) => ({ field: 'tools', message: `unknown tool "${name}"` })),
        );
      }
    }
    if (!(await deps.users.setAllowedTools(userId, tools))) throw notFound('user');
    sendJson(res, userToolsLimitSchema, { id: userId, allowedTools: tools });
  });
  return router;
}
