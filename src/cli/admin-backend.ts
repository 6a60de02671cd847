import type { z } from 'zod';
import type { apiKeySchema } from '../api/contract/keys-contract';
import type { User } from '../store/users-repository';

/** A key as the CLI prints it: what the key lists of the API show. */
export type ListedKey = z.infer<typeof apiKeySchema>;

/**
 * What revoking a key did. Idempotent, as the API's DELETE is: a key revoked before is answered
 * with its revocation time. `announced`: the API processes were told (its connections close at once).
 */
export type KeyRevocation = { kind: 'revoked'; revokedAt: string; announced: boolean } | { kind: 'not_found' };

/**
 * What the CLI's users and keys commands do, wherever they do it: in the database itself, or
 * through a running service's admin routes (while `npm start` holds the embedded database).
 * null: no such user.
 */
export interface AdminBackend {
  createUser(name: string): Promise<{ id: string; name: string; keyId: string; apiKey: string }>;
  listUsers(): Promise<User[]>;
  /** The names of the tools the service does not know; refused before anything changes. */
  setAllowedTools(userId: string, tools: string[] | null): Promise<{ kind: 'set' } | { kind: 'no_user' } | { kind: 'unknown_tools'; message: string }>;
  createKey(userId: string, name: string | null): Promise<{ id: string; userId: string; name: string | null; apiKey: string } | null>;
  listKeys(userId: string): Promise<ListedKey[] | null>;
  revokeKey(keyId: string): Promise<KeyRevocation>;
  close(): Promise<void>;
}
