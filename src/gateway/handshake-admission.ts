import type http from 'node:http';
import type { AuthGuard } from '../api/require-user';
import { consumeUserRate, type UserRateLimiter } from '../api/user-rate-limit';
import type { Authentication } from '../auth/authenticator';
import type { Principal } from '../auth/principal';
import type { PerKeyCap } from '../limits/per-key-cap';
import type { HandshakeRefusal } from './handshake-refusals';

export interface HandshakeAdmissionDeps {
  /** Who a handshake is (`Authorization: Bearer` or `?ticket=`), or why it is refused. */
  authenticate(req: http.IncomingMessage): Promise<Authentication>;
  /** Handshakes with bad credentials, counted per client address as the HTTP API counts them. */
  authGuard: AuthGuard;
  /** The HTTP API's per-user limiter: a handshake counts as one request of its user. */
  rateLimiter: UserRateLimiter;
  connectionsPerKey: PerKeyCap;
}

export type HandshakeAdmission = { ok: true; principal: Principal; release(): void } | { ok: false; refusal: HandshakeRefusal };

/** Retry-After of a handshake refused for the key's open connections: one of them must close first. */
const CONNECTIONS_RETRY_AFTER_SECONDS = 5;

/**
 * Decides a handshake before the upgrade, as the HTTP API decides a request:
 * 1. an address past AUTH_FAILURES_PER_MINUTE is refused before any lookup (429);
 * 2. missing or wrong credentials are counted against the address (401); an expired session
 *    token is refused (401 `token_expired`) without being counted;
 * 3. it takes a place among its key's open websockets on this process (WS_MAX_CONNECTIONS_PER_KEY;
 *    429), which the caller gives back (`release`) when the socket closes. A handshake refused here
 *    is not counted as a request: clients that retry past the cap (the devices of a process that
 *    died, all reconnecting to one) would otherwise spend the user's rate and leave its HTTP
 *    requests nothing; what each refusal costs is one look at an in-process count;
 * 4. the handshake counts as one request of its user (RATE_LIMIT_PER_MINUTE, shared with HTTP;
 *    429), and a refused one gives its place back.
 */
export async function admitHandshake(req: http.IncomingMessage, deps: HandshakeAdmissionDeps): Promise<HandshakeAdmission> {
  const address = deps.authGuard.addressOf(req);
  const wait = await deps.authGuard.failures.waitSeconds(address);
  if (wait > 0) return { ok: false, refusal: { reason: 'failed_auth', retryAfterSeconds: wait } };
  const authentication = await deps.authenticate(req);
  // An expired session token is not counted against the address, as over HTTP.
  if (!authentication.ok && authentication.refusal === 'token_expired') return { ok: false, refusal: { reason: 'token_expired' } };
  if (!authentication.ok) {
    await deps.authGuard.failures.failed(address);
    return { ok: false, refusal: { reason: 'unauthorized' } };
  }
  const { principal } = authentication;
  const release = deps.connectionsPerKey.take(principal.keyId);
  if (!release) return { ok: false, refusal: { reason: 'connections_per_key', retryAfterSeconds: CONNECTIONS_RETRY_AFTER_SECONDS } };
  try {
    const rate = await consumeUserRate(deps.rateLimiter, principal.userId);
    if (rate.ok) return { ok: true, principal, release };
    release();
    return { ok: false, refusal: { reason: 'user_rate', retryAfterSeconds: rate.retryAfterSeconds } };
  } catch (error) {
    release();
    throw error;
  }
}
