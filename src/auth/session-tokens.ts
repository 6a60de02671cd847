import { createHash, randomBytes } from 'node:crypto';
import type { RedisClient } from '../redis/redis-connection';
import { z } from 'zod';
import type { Principal } from './principal';

const storedSessionSchema = z.object({ userId: z.string(), keyId: z.string() });
const TOKEN = /^sst_[A-Za-z0-9_-]{43}$/;

export const isSessionToken = (credential: string) => credential.startsWith('sst_');

/**
 * Short-lived bearer tokens for browsers, which should not hold API keys. Minted with an API key
 * and kept in Redis under their hash until they expire; each remembers the key it came from, so
 * that revoking the key ends them too (the authenticator checks the key on every use).
 */
export class SessionTokens {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
  ) {}

  async mint(principal: Principal, ttlSeconds: number): Promise<{ token: string; expiresAt: string }> {
    const token = `sst_${randomBytes(32).toString('base64url')}`;
    await this.redis.set(this.key(token), JSON.stringify({ userId: principal.userId, keyId: principal.keyId }), 'EX', ttlSeconds);
    return { token, expiresAt: new Date(Date.now() + ttlSeconds * 1000).toISOString() };
  }

  /** The principal of a token that exists and has not expired; null otherwise. */
  async resolve(token: string): Promise<Principal | null> {
    if (!TOKEN.test(token)) return null;
    const stored = await this.redis.get(this.key(token));
    if (stored === null) return null;
    const parsed = storedSessionSchema.safeParse(JSON.parse(stored));
    return parsed.success ? parsed.data : null;
  }

  private key(token: string): string {
    return `${this.prefix}:session:${createHash('sha256').update(token).digest('hex')}`;
  }
}
