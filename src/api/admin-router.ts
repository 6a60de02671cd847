import { Router } from 'express';
import { AppError, notFound } from '../errors/app-error';
import type { ApiKeyInfo } from '../store/users-repository';
import { unknownToolNames, unknownToolsMessage } from '../tools/known-tools';
import { createUserSchema, userToolsSchema } from './request-schemas';
import { parseInput, parseRouteId } from './validate';
import { apiKeyListSchema, createdUserSchema, userToolsLimitSchema } from './contract/admin-contract';
import { sendJson } from './send-json';

export interface AdminRouterDeps {
  users: {
    createUserWithKey(name: string): Promise<{ id: string; name: string; keyId: string; apiKey: string }>;
    setAllowedTools(userId: string, tools: string[] | null): Promise<boolean>;
    getUser(userId: string): Promise<unknown>;
    listApiKeys(userId: string): Promise<ApiKeyInfo[]>;
  };
  /** Every tool the service knows, for refusing a limit that names another. */
  tools: { list(): { name: string }[] };
}

/** The admin routes, mounted behind requireAdmin and the body parser. */
export function adminRouter(deps: AdminRouterDeps): Router {
  const router = Router();
  router.post('/users', async (req, res) => {
    const { name } = parseInput(createUserSchema, req.body);
    const user = await deps.users.createUserWithKey(name);
    sendJson(res, createdUserSchema, { id: user.id, name: user.name, keyId: user.keyId, apiKey: user.apiKey }, 201);
  });
  router.get('/users/:id/keys', async (req, res) => {
    const userId = parseRouteId(req.params.id, 'user');
    if (!(await deps.users.getUser(userId))) throw notFound('user');
    // Never the key itself (only its hash is stored): its id, its first characters and its dates.
    const keys = await deps.users.listApiKeys(userId);
    sendJson(res, apiKeyListSchema, { data: keys.map(({ id, prefix, createdAt, revokedAt }) => ({ id, prefix, createdAt, revokedAt })) });
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
