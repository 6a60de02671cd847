import type { IncomingMessage } from 'node:http';
import type { Principal } from './principal';
import { isSessionToken, type SessionTokens } from './session-tokens';
import type { WsTickets } from './ws-tickets';

export interface ApiKeyLookup {
  findUserByApiKey(key: string): Promise<Principal | null>;
  /** False once the key is revoked. */
  isKeyActive(keyId: string): Promise<boolean>;
}

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
  async fromAuthorizationHeader(header: string | undefined): Promise<Principal | null> {
    const credential = bearerToken(header);
    if (!credential) return null;
    if (!isSessionToken(credential)) return this.used(await this.users.findUserByApiKey(credential));
    const principal = await this.sessions.resolve(credential);
    return this.used(principal && (await this.users.isKeyActive(principal.keyId)) ? { ...principal, viaSession: true } : null);
  }

  /** A websocket handshake: `Authorization: Bearer` or `?ticket=` (void once its key is revoked). */
  async fromUpgradeRequest(req: IncomingMessage): Promise<Principal | null> {
    if (req.headers.authorization) return this.fromAuthorizationHeader(req.headers.authorization);
    const ticket = new URL(req.url ?? '/', 'http://localhost').searchParams.get('ticket');
    const principal = ticket ? await this.tickets.redeem(ticket) : null;
    return this.used(principal && (await this.users.isKeyActive(principal.keyId)) ? principal : null);
  }

  private used(principal: Principal | null): Principal | null {
    if (principal) this.onKeyUsed(principal.keyId);
    return principal;
  }
}

export function bearerToken(header: string | undefined): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)$/i.exec(header.trim());
  return match?.[1] ?? null;
}
