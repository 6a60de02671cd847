import type { ApiKeyLookup } from '../../../src/auth/authenticator';
import { VerifiedKeyCache } from '../../../src/auth/verified-key-cache';

/** The keys table as the cache sees it: counts the lookups that reached it; `hold` keeps them in flight. */
function keysTable() {
  const active = new Map([['sy_alice', { userId: 'user_alice', keyId: 'key_alice' }]]);
  let gate: Promise<void> = Promise.resolve();
  const table = {
    asked: 0,
    revoke: (key: string) => active.delete(key),
    /** Lookups answer as of now, but return only once released. */
    hold: () => {
      let release = () => {};
      gate = new Promise((resolve) => (release = resolve));
      return () => {
        gate = Promise.resolve();
        release();
      };
    },
    findUserByApiKey: async (key: string) => {
      table.asked += 1;
      const answer = active.get(key) ?? null;
      await gate;
      return answer;
    },
    isKeyActive: async (keyId: string) => {
      table.asked += 1;
      const answer = [...active.values()].some((principal) => principal.keyId === keyId);
      await gate;
      return answer;
    },
  } satisfies ApiKeyLookup & Record<string, unknown>;
  return table;
}

describe('VerifiedKeyCache', () => {
  it('answers a verified key and its key id from memory until cleared, then asks again', async () => {
    const table = keysTable();
    const cache = new VerifiedKeyCache(table, 60_000);
    expect(await cache.findUserByApiKey('sy_alice')).toEqual({ userId: 'user_alice', keyId: 'key_alice' });
    expect(await cache.findUserByApiKey('sy_alice')).toEqual({ userId: 'user_alice', keyId: 'key_alice' });
    expect(await cache.isKeyActive('key_alice')).toBe(true);
    expect(table.asked).toBe(1);

    table.revoke('sy_alice');
    cache.clear();
    expect(await cache.findUserByApiKey('sy_alice')).toBeNull();
    expect(await cache.isKeyActive('key_alice')).toBe(false);
    expect(table.asked).toBe(3);
  });

  it('never keeps a refusal: a key is asked again every time it is refused', async () => {
    const table = keysTable();
    const cache = new VerifiedKeyCache(table, 60_000);
    expect(await cache.findUserByApiKey('sy_mallory')).toBeNull();
    expect(await cache.findUserByApiKey('sy_mallory')).toBeNull();
    expect(await cache.isKeyActive('key_mallory')).toBe(false);
    expect(await cache.isKeyActive('key_mallory')).toBe(false);
    expect(table.asked).toBe(4);
  });

  it('does not store the answer of a lookup that was in flight when a revocation cleared it', async () => {
    const table = keysTable();
    const cache = new VerifiedKeyCache(table, 60_000);
    // Both lookups read the key as active; the revocation is announced before they return.
    const release = table.hold();
    const lookups = Promise.all([cache.findUserByApiKey('sy_alice'), cache.isKeyActive('key_alice')]);
    cache.clear();
    release();
    const [principal, active] = await lookups;
    expect([principal?.keyId, active]).toEqual(['key_alice', true]);
    table.revoke('sy_alice');
    expect(await cache.findUserByApiKey('sy_alice')).toBeNull();
    expect(await cache.isKeyActive('key_alice')).toBe(false);
  });

  it('asks on every request when its ttl is 0', async () => {
    const table = keysTable();
    const cache = new VerifiedKeyCache(table, 0);
    await cache.findUserByApiKey('sy_alice');
    await cache.isKeyActive('key_alice');
    await cache.findUserByApiKey('sy_alice');
    expect(table.asked).toBe(3);
  });

  it('returns a copy, so a caller that changes the principal does not change the cache', async () => {
    const cache = new VerifiedKeyCache(keysTable(), 60_000);
    const first = await cache.findUserByApiKey('sy_alice');
    if (first) first.viaSession = true;
    expect(await cache.findUserByApiKey('sy_alice')).toEqual({ userId: 'user_alice', keyId: 'key_alice' });
  });
});
