import { timingSafeEqual } from 'node:crypto';
import { Router, type RequestHandler } from 'express';
import { AppError, notFound } from '../errors/app-error';
import { bearerToken } from '../auth/authenticator';
import { createUserSchema, userToolsSchema } from './request-schemas';
import { parseInput, parseRouteId } from './validate';

export interface AdminRouterDeps {
  adminToken: string | undefined;
  users: {
    createUserWithKey(name: string): Promise<{ id: string; name: string; apiKey: string }>;
    setAllowedTools(userId: string, tools: string[] | null): Promise<boolean>;
  };
}

/** Admin routes answer 404 while ADMIN_TOKEN is unset, as if they did not exist. */
export function adminRouter(deps: AdminRouterDeps): Router {
  const router = Router();
  router.use(requireAdmin(deps.adminToken));
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

function requireAdmin(adminToken: string | undefined): RequestHandler {
  const expected = adminToken ? Buffer.from(adminToken) : undefined;
  return (req, _res, next) => {
    if (!expected) throw new AppError('not_found', `no route for ${req.method} ${req.originalUrl}`);
    const given = Buffer.from(bearerToken(req.headers.authorization) ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw new AppError('unauthorized', 'a valid admin token is required');
    }
    next();
  };
}
