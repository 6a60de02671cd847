import type { RequestHandler, Response } from 'express';
import type { Authenticator } from '../auth/authenticator';
import type { Principal } from '../auth/principal';
import { AppError } from '../errors/app-error';
import { sessionTokenMayUse } from './session-scope';

/**
 * Authenticates every request under it with `Authorization: Bearer <api key>`, or a session
 * token where one may be used (session-scope.ts).
 */
export function requireUser(authenticator: Authenticator): RequestHandler {
  return async (req, res, next) => {
    const principal = await authenticator.fromAuthorizationHeader(req.headers.authorization);
    if (!principal) throw new AppError('unauthorized', 'a valid API key is required (Authorization: Bearer <key>)');
    if (principal.viaSession && !sessionTokenMayUse(req.method, `${req.baseUrl}${req.path}`)) {
      throw new AppError('forbidden', 'a session token may read conversations and turns, cancel turns and get websocket tickets; this route needs the API key');
    }
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
