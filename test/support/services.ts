import { Redis } from 'ioredis';
import { Client } from 'pg';

/** The real Redis and PostgreSQL the tests run against (CI makes sure both answer). */
export const TEST_REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
export const TEST_POSTGRES_URL = process.env.TEST_DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

export async function dropRedisPrefix(prefix: string): Promise<void> {
  const redis = new Redis(TEST_REDIS_URL);
  try {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

export async function dropSchema(schema: string): Promise<void> {
  const client = new Client({ connectionString: TEST_POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}

/**
 * A connection of its own to the real server, in `schema` of `databaseUrl` (a stack's own
 * database, or the shared one a stack behind a proxy uses): what PostgreSQL holds while a stack
 * cannot reach it.
 */
export async function connectDirect(schema: string, databaseUrl: string = TEST_POSTGRES_URL): Promise<Client> {
  const client = new Client({ connectionString: databaseUrl, options: `-c search_path=${schema}` });
  await client.connect();
  return client;
}
