import { createHash, randomBytes } from 'node:crypto';
import type { RedisClient } from '../redis/redis-connection';
import { z } from 'zod';
import type { Principal } from './principal';

const storedSessionSchema = z.object({ userId: z.string(), keyId: z.string(), agents: z.array(z.string()).optional() });
const TOKEN = /^sst_[A-Za-z0-9_-]{43}$/;

/**
 * How long past its expiry a token is still known to have been minted: so long, an expired one
 * answers `token_expired` (a page refreshes it) rather than `unauthorized` (a wrong token).
 */
export const EXPIRED_TOKEN_MEMORY_SECONDS = 86_400;

export const isSessionToken = (credential: string) => credential.startsWith('sst_');

/** A session token's principal, or why it has none: never valid (or malformed), or valid once and expired. */
export type SessionResolution = { ok: true; principal: Principal } | { ok: false; reason: 'unknown' | 'expired' };

/**
 * Short-lived bearer tokens for browsers, which should not hold API keys. Minted with an API key
 * and kept in Redis under their hash until they expire; each remembers the key it came from, so
 * that revoking the key ends them too (the authenticator checks the key on every use). A marker
 * of the token, kept a day longer, tells an expired token from one that never was.
 */
export class SessionTokens {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  /** `agents`: the ids of the agents it may run turns on (none given: any of the user's). */
  async mint(principal: Principal, ttlSeconds: number, agents?: readonly string[]): Promise<{ token: string; expiresAt: string }> {
    const token = `sst_${randomBytes(32).toString('base64url')}`;
    const hash = hashOf(token);
    // Two writes, not a MULTI: on a Redis Cluster the two keys may live on different nodes.
    await Promise.all([
      this.redis.set(this.key(hash), JSON.stringify({ userId: principal.userId, keyId: principal.keyId, ...(agents ? { agents } : {}) }), 'EX', ttlSeconds),
      this.redis.set(this.mintedKey(hash), '1', 'EX', ttlSeconds + EXPIRED_TOKEN_MEMORY_SECONDS),
    ]);
    return { token, expiresAt: new Date(Date.now() + ttlSeconds * 1000).toISOString() };
  }

  /** The principal of a token that exists and has not expired; else whether it expired. */
  async resolve(token: string): Promise<SessionResolution> {
    if (!TOKEN.test(token)) return { ok: false, reason: 'unknown' };
    const hash = hashOf(token);
    const stored = await this.redis.get(this.key(hash));
    if (stored === null) return { ok: false, reason: (await this.redis.exists(this.mintedKey(hash))) === 1 ? 'expired' : 'unknown' };
    const parsed = storedSessionSchema.safeParse(JSON.parse(stored));
    if (!parsed.success) return { ok: false, reason: 'unknown' };
    const { agents, ...principal } = parsed.data;
    return { ok: true, principal: { ...principal, ...(agents ? { agents } : {}) } };
  }

  private key(hash: string): string {
    return `${this.prefix}:session:${hash}`;
  }

  private mintedKey(hash: string): string {
    return `${this.prefix}:session-minted:${hash}`;
  }
}

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');
