import { httpApi, SwitchyardApiError, type HttpOptions } from '@switchyard/client';
import type { User } from '../store/users-repository';
import type { AdminBackend, ListedKey } from './admin-backend';

/**
 * The admin commands through a running service's admin routes (`/v1/admin`, with the admin
 * token): how they work while `npm start` holds the embedded database, and against any service
 * given by --url. The service checks tool names against the tools it has, and announces a
 * revocation to its API processes itself.
 */
export function httpAdmin(options: HttpOptions): AdminBackend {
  const http = httpApi(options);
  const path = (...parts: string[]) => `/v1/admin/${parts.map(encodeURIComponent).join('/')}`;
  return {
    createUser: (name) => http('POST', path('users'), { name }),
    listUsers: async () => (await http<{ data: User[] }>('GET', path('users'))).data,
    async setAllowedTools(userId, tools) {
      try {
        await http('PUT', path('users', userId, 'tools'), { tools });
        return { kind: 'set' };
      } catch (error) {
        if (isCode(error, 'not_found')) return { kind: 'no_user' };
        if (isCode(error, 'invalid_request')) return { kind: 'unknown_tools', message: (error as Error).message };
        throw error;
      }
    },
    async createKey(userId, name) {
      const created = await orNull(http<{ id: string; name: string | null; apiKey: string }>('POST', path('users', userId, 'keys'), name === null ? {} : { name }));
      return created && { id: created.id, userId, name: created.name, apiKey: created.apiKey };
    },
    listKeys: async (userId) => (await orNull(http<{ data: ListedKey[] }>('GET', path('users', userId, 'keys'))))?.data ?? null,
    async revokeKey(keyId) {
      const key = await orNull(http<{ revokedAt: string }>('DELETE', path('keys', keyId)));
      return key ? { kind: 'revoked', revokedAt: key.revokedAt, announced: true } : { kind: 'not_found' };
    },
    close: async () => undefined,
  };
}

const isCode = (error: unknown, code: string) => error instanceof SwitchyardApiError && error.code === code;

/** A 404 (no such user or key) as null. */
async function orNull<T>(answer: Promise<T>): Promise<T | null> {
  try {
    return await answer;
  } catch (error) {
    if (isCode(error, 'not_found')) return null;
    throw error;
  }
}
