import type { RequestHandler, Response } from 'express';
import type { Authenticator } from '../auth/authenticator';
import type { Principal } from '../auth/principal';
import { AppError } from '../errors/app-error';

/** Authenticates every request under it with `Authorization: Bearer <api key>`. */
export function requireUser(authenticator: Authenticator): RequestHandler {
  return async (req, res, next) => {
    const principal = await authenticator.fromAuthorizationHeader(req.headers.authorization);
    if (!principal) throw new AppError('unauthorized', 'a valid API key is required (Authorization: Bearer <key>)');
    res.locals.principal = principal;
    next();
  };
}

export function principalOf(res: Response): Principal {
  const principal = res.locals.principal as Principal | undefined;
  if (!principal) throw new AppError('unauthorized', 'not authenticated');
  return principal;
}

export function userIdOf(res: Response): string {
  return principalOf(res).userId;
}
