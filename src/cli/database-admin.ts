import { listedKey } from '../api/contract/keys-contract';
import type { UsersRepository } from '../store/users-repository';
import { unknownToolNames, unknownToolsMessage, type KnownTools } from '../tools/known-tools';
import type { AdminBackend } from './admin-backend';

export interface DatabaseAdminDeps {
  users: UsersRepository;
  /** The tools the server offers (read from its TOOLS_DIR and mcp.json), for refusing unknown names. */
  knownTools(): Promise<KnownTools>;
  /** Tells the API processes of a revocation (over Redis); false when none could be told. */
  announceRevocation(keyId: string): Promise<boolean>;
  close(): Promise<void>;
}

/** The admin commands in the database itself: DATABASE_URL, or the embedded one while no service holds it. */
export function databaseAdmin(deps: DatabaseAdminDeps): AdminBackend {
  const { users } = deps;
  return {
    createUser: (name) => users.createUserWithKey(name),
    listUsers: () => users.listUsers(),
    async setAllowedTools(userId, tools) {
      if (tools) {
        const known = await deps.knownTools();
        const unknown = unknownToolNames(tools, known);
        if (unknown.length > 0) return { kind: 'unknown_tools', message: unknownToolsMessage(unknown, known) };
      }
      return (await users.setAllowedTools(userId, tools)) ? { kind: 'set' } : { kind: 'no_user' };
    },
    async createKey(userId, name) {
      if (!(await users.getUser(userId))) return null;
      return users.createApiKey(userId, name);
    },
    async listKeys(userId) {
      if (!(await users.getUser(userId))) return null;
      return (await users.listApiKeys(userId)).map(listedKey);
    },
    async revokeKey(keyId) {
      const revokedNow = await users.revokeApiKey(keyId);
      const key = await users.getApiKey(keyId);
      if (!key?.revokedAt) return { kind: 'not_found' };
      return { kind: 'revoked', revokedAt: key.revokedAt, announced: revokedNow ? await deps.announceRevocation(keyId) : false };
    },
    close: () => deps.close(),
  };
}
