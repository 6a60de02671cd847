import { Router } from 'express';
import { notFound } from '../errors/app-error';
import { createUserSchema, userToolsSchema } from './request-schemas';
import { parseInput, parseRouteId } from './validate';

export interface AdminRouterDeps {
  users: {
    createUserWithKey(name: string): Promise<{ id: string; name: string; apiKey: string }>;
    setAllowedTools(userId: string, tools: string[] | null): Promise<boolean>;
  };
}

/** The admin routes, mounted behind requireAdmin and the body parser. */
export function adminRouter(deps: AdminRouterDeps): Router {
  const router = Router();
  router.post('/users', async (req, res) => {
    const { name } = parseInput(createUserSchema, req.body);
    const user = await deps.users.createUserWithKey(name);
    res.status(201).json({ id: user.id, name: user.name, apiKey: user.apiKey });
  });
  router.put('/users/:id/tools', async (req, res) => {
    const userId = parseRouteId(req.params.id, 'user');
    const { tools } = parseInput(userToolsSchema, req.body);
    if (!(await deps.users.setAllowedTools(userId, tools))) throw notFound('user');
    res.json({ id: userId, allowedTools: tools });
  });
  return router;
}
