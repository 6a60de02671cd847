import type { RequestHandler, Response } from 'express';
import type { IncomingMessage } from 'node:http';
import { TOKEN_EXPIRED, type Authenticator } from '../auth/authenticator';
import type { FailedAuthGuard } from '../auth/failed-auth-guard';
import type { Principal } from '../auth/principal';
import { AppError } from '../errors/app-error';
import { SESSION_TOKEN_SCOPE, sessionTokenMayUse } from './session-scope';

/** Bad credentials counted per client address (see FailedAuthGuard). */
export interface AuthGuard {
  failures: Pick<FailedAuthGuard, 'waitSeconds' | 'failed'>;
  addressOf(req: IncomingMessage): string;
}

/**
 * Authenticates every request under it with `Authorization: Bearer <api key>`, or a session
 * token where one may be used (session-scope.ts).
 */
export function requireUser(authenticator: Authenticator, guard: AuthGuard): RequestHandler {
  return async (req, res, next) => {
    const address = guard.addressOf(req);
    const wait = await guard.failures.waitSeconds(address);
    if (wait > 0) throw new AppError('rate_limited', 'too many requests with a missing or wrong key from this address; wait', undefined, wait);
    const authentication = await authenticator.fromAuthorizationHeader(req.headers.authorization);
    // An expired token is no guess at a credential: it is not counted against the address, so
    // that a page refreshing its token is never held back by the failed-login guard.
    if (!authentication.ok && authentication.refusal === 'token_expired') throw new AppError('token_expired', TOKEN_EXPIRED);
    if (!authentication.ok) {
      await guard.failures.failed(address);
      throw new AppError('unauthorized', 'a valid API key is required (Authorization: Bearer <key>)');
    }
    const { principal } = authentication;
    if (principal.viaSession && !sessionTokenMayUse(req.method, `${req.baseUrl}${req.path}`)) {
      throw new AppError('forbidden', `${SESSION_TOKEN_SCOPE}; this route needs the API key`);
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
