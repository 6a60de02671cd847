import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../redis/redis-connection';
import { z } from 'zod';
import type { Principal } from './principal';

/** A ticket got with a session token keeps that: its websocket has the token's scope, not the key's. */
const storedTicketSchema = z.object({ userId: z.string(), keyId: z.string(), viaSession: z.boolean().optional() });

/**
 * Short-lived, single-use tickets for browser websocket handshakes, which cannot carry an
 * Authorization header. GETDEL makes redeeming atomic: a ticket works once, on one gateway.
 * A ticket remembers the key it was issued for, so revoking that key voids it too, and whether
 * it was got with a session token (`viaSession`).
 */
export class WsTickets {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly ttlSeconds: number,
  ) {}

  async issue(principal: Principal): Promise<{ ticket: string; expiresInSeconds: number }> {
    const ticket = `wst_${randomBytes(24).toString('base64url')}`;
    const stored: z.infer<typeof storedTicketSchema> = { userId: principal.userId, keyId: principal.keyId, ...(principal.viaSession ? { viaSession: true } : {}) };
    await this.redis.set(this.key(ticket), JSON.stringify(stored), 'EX', this.ttlSeconds);
    return { ticket, expiresInSeconds: this.ttlSeconds };
  }

  /** The principal the ticket was issued to, once; null for an unknown, used or expired ticket. */
  async redeem(ticket: string): Promise<Principal | null> {
    if (!/^wst_[A-Za-z0-9_-]{32}$/.test(ticket)) return null;
    const stored = await this.redis.getdel(this.key(ticket));
    if (stored === null) return null;
    const parsed = storedTicketSchema.safeParse(JSON.parse(stored));
    return parsed.success ? parsed.data : null;
  }

  private key(ticket: string): string {
    return `${this.prefix}:ws-ticket:${ticket}`;
  }
}
