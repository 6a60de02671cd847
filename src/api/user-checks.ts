import type { RequestHandler } from 'express';
import type { Authenticator } from '../auth/authenticator';
import { requireUser, type AuthGuard } from './require-user';
import { limitUserRate, type UserRateLimiter } from './user-rate-limit';

export interface UserCheckNeeds {
  authenticator: Authenticator;
  /** Bad credentials per client address (AUTH_FAILURES_PER_MINUTE, TRUST_PROXY). */
  authGuard: AuthGuard;
  rateLimiter: UserRateLimiter;
}

/**
 * What a request of a user's route passes before the route: its credentials, then the user's
 * rate. Both come before any body is read, so a refused request's body is never waited for.
 */
export function userChecks(needs: UserCheckNeeds): RequestHandler[] {
  return [requireUser(needs.authenticator, needs.authGuard), limitUserRate(needs.rateLimiter)];
}
