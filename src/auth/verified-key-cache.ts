import { LRUCache } from 'lru-cache';
import { hashApiKey } from '../store/users-repository';
import type { ApiKeyLookup } from './authenticator';
import type { Principal } from './principal';

/** Keys verified at once by one process; past it the least recently used are asked again. */
const MAX_ENTRIES = 10_000;

/**
 * The API keys this process verified in the last `ttlMs`, so that a request does not cost a
 * database round trip: by the key's hash (never the key itself) → its principal, and by key id
 * for the session tokens and tickets minted with a key. Only keys found active are kept: a
 * refused key is asked again every time (the failed-auth guard limits those).
 *
 * `clear()` is called when a revocation is announced: from then on every key is asked again,
 * and a lookup that was in flight when it came does not store its (possibly stale) answer.
 * A revocation this process never hears of stops working within `ttlMs`.
 */
export class VerifiedKeyCache implements ApiKeyLookup {
  private readonly principals: LRUCache<string, Principal> | null;
  private readonly activeKeyIds: LRUCache<string, true> | null;
  /** Bumped by `clear()`; a lookup stores its answer only if none came while it ran. */
  private generation = 0;

  constructor(
    private readonly lookup: ApiKeyLookup,
    ttlMs: number,
  ) {
    this.principals = ttlMs > 0 ? new LRUCache({ max: MAX_ENTRIES, ttl: ttlMs }) : null;
    this.activeKeyIds = ttlMs > 0 ? new LRUCache({ max: MAX_ENTRIES, ttl: ttlMs }) : null;
  }

  async findUserByApiKey(key: string): Promise<Principal | null> {
    if (!this.principals) return this.lookup.findUserByApiKey(key);
    const hash = hashApiKey(key);
    const cached = this.principals.get(hash);
    if (cached) return { ...cached };
    const generation = this.generation;
    const principal = await this.lookup.findUserByApiKey(key);
    if (principal && generation === this.generation) {
      this.principals.set(hash, { userId: principal.userId, keyId: principal.keyId });
      this.activeKeyIds?.set(principal.keyId, true);
    }
    return principal;
  }

  async isKeyActive(keyId: string): Promise<boolean> {
    if (!this.activeKeyIds) return this.lookup.isKeyActive(keyId);
    if (this.activeKeyIds.get(keyId)) return true;
    const generation = this.generation;
    const active = await this.lookup.isKeyActive(keyId);
    if (active && generation === this.generation) this.activeKeyIds.set(keyId, true);
    return active;
  }

  /** Forgets every key (revocations are rare; the next request of each key asks the database). */
  clear(): void {
    this.generation += 1;
    this.principals?.clear();
    this.activeKeyIds?.clear();
  }
}
