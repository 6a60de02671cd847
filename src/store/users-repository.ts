import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { Db, Queryable } from './db';

export interface User {
  id: string;
  name: string;
  /** null: every tool; otherwise the only tools this user's turns may offer. */
  allowedTools: string[] | null;
  createdAt: string;
}

export interface ApiKeyInfo {
  id: string;
  userId: string;
  /** What its owner called it; null when it was given none. */
  name: string | null;
  /** The key's first characters, so an operator can tell keys apart. */
  prefix: string;
  createdAt: string;
  /** To the minute (auth/key-usage.ts); null until first used. */
  lastUsedAt: string | null;
  revokedAt: string | null;
}

/** A key just made: the plaintext is returned this once. */
export interface CreatedApiKey {
  id: string;
  userId: string;
  name: string | null;
  apiKey: string;
}

/** What `revokeOwnApiKey` did. */
export type OwnKeyRevocation = { kind: 'revoked'; key: ApiKeyInfo; now: boolean } | { kind: 'not_found' } | { kind: 'last_key' };

interface UserRow {
  id: string;
  name: string;
  allowed_tools: string[] | null;
  created_at: Date;
}

const KEY_PREFIX = 'sy_';

/**
 * API keys are 32 random bytes, so a plain SHA-256 is enough to store them (a slow hash guards
 * low-entropy passwords, not these); lookups go by the hash, never by comparing plaintext.
 * The repository caches nothing; the API's VerifiedKeyCache (src/auth) keeps verified keys briefly.
 */
export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export class UsersRepository {
  constructor(private readonly db: Db) {}

  /** One transaction: a user is never left without the key that was to be shown for it. */
  async createUserWithKey(name: string, allowedTools: string[] | null = null): Promise<{ id: string; name: string; keyId: string; apiKey: string }> {
    const id = `user_${randomUUID()}`;
    return this.db.transaction(async (tx) => {
      await tx.query('INSERT INTO users (id, name, allowed_tools) VALUES ($1, $2, $3)', [id, name, allowedTools === null ? null : JSON.stringify(allowedTools)]);
      const key = await this.createApiKey(id, null, tx);
      return { id, name, keyId: key.id, apiKey: key.apiKey };
    });
  }

  /** The plaintext key is returned this once; only its hash is stored. */
  async createApiKey(userId: string, name: string | null = null, db: Queryable = this.db): Promise<CreatedApiKey> {
    const apiKey = `${KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
    const id = `key_${randomUUID()}`;
    await db.query('INSERT INTO api_keys (id, user_id, key_hash, prefix, name) VALUES ($1, $2, $3, $4, $5)', [
      id,
      userId,
      hashApiKey(apiKey),
      apiKey.slice(0, KEY_PREFIX.length + 6),
      name,
    ]);
    return { id, userId, name, apiKey };
  }

  /** Records a use of the key now (the caller spaces the calls out: auth/key-usage.ts). */
  async touchApiKey(keyId: string): Promise<void> {
    await this.db.query('UPDATE api_keys SET last_used_at = now() WHERE id = $1', [keyId]);
  }

  /**
   * A user revoking one of their own keys with the key `byKeyId`. The user's row is locked for
   * the check and the update, so two keys revoking themselves at once cannot both pass "another
   * key is left" and leave the user none. A key already revoked is answered as it is (`now`
   * false): revoking is idempotent.
   */
  async revokeOwnApiKey(userId: string, keyId: string, byKeyId: string): Promise<OwnKeyRevocation> {
    return this.db.transaction(async (tx) => {
      await tx.query('SELECT id FROM users WHERE id = $1 FOR UPDATE', [userId]);
      const key = await this.getApiKey(keyId, tx);
      if (!key || key.userId !== userId) return { kind: 'not_found' };
      if (key.revokedAt) return { kind: 'revoked', key, now: false };
      if (keyId === byKeyId) {
        const { rows } = await tx.query('SELECT 1 FROM api_keys WHERE user_id = $1 AND id <> $2 AND revoked_at IS NULL LIMIT 1', [userId, keyId]);
        if (rows.length === 0) return { kind: 'last_key' };
      }
      const { rows } = await tx.query<ApiKeyRow>(`UPDATE api_keys SET revoked_at = now() WHERE id = $1 RETURNING ${KEY_COLUMNS}`, [keyId]);
      return { kind: 'revoked', key: toApiKeyInfo(rows[0]!), now: true };
    });
  }

  async findUserByApiKey(key: string): Promise<{ userId: string; keyId: string } | null> {
    if (!key.startsWith(KEY_PREFIX) || key.length > 200) return null;
    const { rows } = await this.db.query<{ id: string; user_id: string }>('SELECT id, user_id FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL', [hashApiKey(key)]);
    return rows[0] ? { userId: rows[0].user_id, keyId: rows[0].id } : null;
  }

  async isKeyActive(keyId: string): Promise<boolean> {
    const { rows } = await this.db.query('SELECT 1 FROM api_keys WHERE id = $1 AND revoked_at IS NULL', [keyId]);
    return rows.length > 0;
  }

  /** Which of these keys are revoked (one query, for the sweep of open connections). */
  async revokedAmong(keyIds: string[]): Promise<string[]> {
    if (keyIds.length === 0) return [];
    const { rows } = await this.db.query<{ id: string }>('SELECT id FROM api_keys WHERE id = ANY($1) AND revoked_at IS NOT NULL', [keyIds]);
    return rows.map((row) => row.id);
  }

  async revokeApiKey(keyId: string): Promise<boolean> {
    const { rows } = await this.db.query('UPDATE api_keys SET revoked_at = now() WHERE id = $1 AND revoked_at IS NULL RETURNING id', [keyId]);
    return rows.length > 0;
  }

  async getUser(id: string): Promise<User | null> {
    const { rows } = await this.db.query<UserRow>('SELECT id, name, allowed_tools, created_at FROM users WHERE id = $1', [id]);
    return rows[0] ? toUser(rows[0]) : null;
  }

  async listUsers(): Promise<User[]> {
    const { rows } = await this.db.query<UserRow>('SELECT id, name, allowed_tools, created_at FROM users ORDER BY created_at, id');
    return rows.map(toUser);
  }

  async listApiKeys(userId: string): Promise<ApiKeyInfo[]> {
    const { rows } = await this.db.query<ApiKeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE user_id = $1 ORDER BY created_at, id`, [userId]);
    return rows.map(toApiKeyInfo);
  }

  async getApiKey(keyId: string, db: Queryable = this.db): Promise<ApiKeyInfo | null> {
    const { rows } = await db.query<ApiKeyRow>(`SELECT ${KEY_COLUMNS} FROM api_keys WHERE id = $1`, [keyId]);
    return rows[0] ? toApiKeyInfo(rows[0]) : null;
  }

  /** null lifts the limit; a list limits the user's turns to those tools. */
  async setAllowedTools(userId: string, allowedTools: string[] | null): Promise<boolean> {
    const { rows } = await this.db.query('UPDATE users SET allowed_tools = $2 WHERE id = $1 RETURNING id', [userId, allowedTools === null ? null : JSON.stringify(allowedTools)]);
    return rows.length > 0;
  }

  async allowedTools(userId: string): Promise<string[] | null> {
    return (await this.getUser(userId))?.allowedTools ?? null;
  }
}

const KEY_COLUMNS = 'id, user_id, name, prefix, created_at, last_used_at, revoked_at';

interface ApiKeyRow {
  id: string;
  user_id: string;
  name: string | null;
  prefix: string;
  created_at: Date;
  last_used_at: Date | null;
  revoked_at: Date | null;
}

function toApiKeyInfo(row: ApiKeyRow): ApiKeyInfo {
  return {
    id: row.id,
    userId: row.user_id,
    name: row.name,
    prefix: row.prefix,
    createdAt: row.created_at.toISOString(),
    lastUsedAt: row.last_used_at?.toISOString() ?? null,
    revokedAt: row.revoked_at?.toISOString() ?? null,
  };
}

function toUser(row: UserRow): User {
  return { id: row.id, name: row.name, allowedTools: row.allowed_tools, createdAt: row.created_at.toISOString() };
}
