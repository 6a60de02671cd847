import type { IncomingMessage } from 'node:http';
import type { Principal } from './principal';
import { isSessionToken, type SessionTokens } from './session-tokens';
import type { WsTickets } from './ws-tickets';

export interface ApiKeyLookup {
  findUserByApiKey(key: string): Promise<Principal | null>;
  /** False once the key is revoked. */
  isKeyActive(keyId: string): Promise<boolean>;
}

/**
 * Who the credentials are, or why they are refused: missing or wrong (`unauthorized`), or a
 * session token that was valid and has expired (`token_expired`: the page gets a new one).
 */
export type Authentication = { ok: true; principal: Principal } | { ok: false; refusal: 'unauthorized' | 'token_expired' };

/** What a page is told when its session token has expired, over HTTP and at the websocket handshake. */
export const TOKEN_EXPIRED = 'the session token has expired: get a new one (POST /v1/session-tokens, with the API key) and send again';

const UNAUTHORIZED: Authentication = { ok: false, refusal: 'unauthorized' };

/** Turns credentials into a principal; shared by the HTTP API and the websocket handshake. */
export class Authenticator {
  constructor(
    private readonly users: ApiKeyLookup,
    private readonly tickets: WsTickets,
    private readonly sessions: SessionTokens,
    /** Told the key of every accepted credential (a session token's and a ticket's key too): its last use. */
    private readonly onKeyUsed: (keyId: string) => void = () => undefined,
  ) {}

  /** An API key, or a session token minted with one (`viaSession`) while that key is active. */
  async fromAuthorizationHeader(header: string | undefined): Promise<Authentication> {
    const credential = bearerToken(header);
    if (!credential) return UNAUTHORIZED;
    if (!isSessionToken(credential)) return this.found(await this.users.findUserByApiKey(credential));
    const session = await this.sessions.resolve(credential);
    if (!session.ok) return session.reason === 'expired' ? { ok: false, refusal: 'token_expired' } : UNAUTHORIZED;
    // A revoked key's tokens are wrong ones, not expired: a new token would be refused too.
    return this.found((await this.users.isKeyActive(session.principal.keyId)) ? { ...session.principal, viaSession: true } : null);
  }

  /** A websocket handshake: `Authorization: Bearer` or `?ticket=` (void once its key is revoked). */
  async fromUpgradeRequest(req: IncomingMessage): Promise<Authentication> {
    if (req.headers.authorization) return this.fromAuthorizationHeader(req.headers.authorization);
    const ticket = new URL(req.url ?? '/', 'http://localhost').searchParams.get('ticket');
    const principal = ticket ? await this.tickets.redeem(ticket) : null;
    return this.found(principal && (await this.users.isKeyActive(principal.keyId)) ? principal : null);
  }

  /** Authenticated, its key's use noted (`lastUsedAt`), or refused as no credential. */
  private found(principal: Principal | null): Authentication {
    if (!principal) return UNAUTHORIZED;
    this.onKeyUsed(principal.keyId);
    return { ok: true, principal };
  }
}

export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header.trim());
  return match?.[1] ?? null;
}
