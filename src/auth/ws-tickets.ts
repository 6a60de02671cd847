import { randomBytes } from 'node:crypto';
import type { RedisClient } from '../runtime/redis-connection';
import { z } from 'zod';
import type { Principal } from './principal';

const storedTicketSchema = z.object({ userId: z.string(), keyId: z.string() });

/**
 * Short-lived, single-use tickets for browser websocket handshakes, which cannot carry an
 * Authorization header. GETDEL makes redeeming atomic: a ticket works once, on one gateway.
 * A ticket remembers the key it was issued for, so revoking that key voids it too.
 */
export class WsTickets {
  constructor(
    private readonly redis: RedisClient,
    private readonly prefix: string,
    private readonly ttlSeconds: number,
  ) {}

  async issue(principal: Principal): Promise<{ ticket: string; expiresInSeconds: number }> {
    const ticket = `wst_${randomBytes(24).toString('base64url')}`;
    await this.redis.set(this.key(ticket), JSON.stringify(principal), 'EX', this.ttlSeconds);
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
