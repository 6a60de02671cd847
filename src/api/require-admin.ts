import { timingSafeEqual } from 'node:crypto';
import type { RequestHandler } from 'express';
import { bearerToken } from '../auth/authenticator';
import { AppError } from '../errors/app-error';
import type { AuthGuard } from './require-user';

/**
 * Lets through only `Authorization: Bearer <ADMIN_TOKEN>`. Wrong tokens count against the
 * client address as wrong API keys do (requireUser): past AUTH_FAILURES_PER_MINUTE the address
 * is answered 429, whatever it sends. While ADMIN_TOKEN is unset the admin routes answer 404,
 * as if they did not exist.
 */
export function requireAdmin(adminToken: string | undefined, guard: AuthGuard): RequestHandler {
  const expected = adminToken ? Buffer.from(adminToken) : undefined;
  return async (req, _res, next) => {
    if (!expected) throw new AppError('not_found', `no route for ${req.method} ${req.originalUrl}`);
    const address = guard.addressOf(req);
    const wait = await guard.failures.waitSeconds(address);
    if (wait > 0) throw new AppError('rate_limited', 'too many requests with a missing or wrong token from this address; wait', undefined, wait);
    const given = Buffer.from(bearerToken(req.headers.authorization) ?? '');
    if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
      await guard.failures.failed(address);
      throw new AppError('unauthorized', 'a valid admin token is required');
    }
    next();
  };
}
