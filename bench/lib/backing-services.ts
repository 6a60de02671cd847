import { Redis } from 'ioredis';
import { Client } from 'pg';

/** Redis and PostgreSQL as they are on this machine (the suite starts neither). */
export const REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
export const DATABASE_URL = process.env.DATABASE_URL || 'postgresql://postgres@127.0.0.1:5432/postgres';

/** BullMQ needs `maxRetriesPerRequest: null` on the connections its workers block on. */
export function connectRedis(): Redis {
  return new Redis(REDIS_URL, { maxRetriesPerRequest: null });
}

/** Every key whose name starts with `prefix` (e.g. `bench-<run>` takes every case's keys). */
export async function dropRedisKeys(redis: Redis, prefix: string): Promise<number> {
  let dropped = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) dropped += await redis.unlink(...keys);
  } while (cursor !== '0');
  return dropped;
}

/** Keys under `prefix` and the bytes Redis says they take (MEMORY USAGE, pipelined per page). */
export async function redisFootprint(redis: Redis, prefix: string): Promise<{ keys: number; bytes: number }> {
  let keys = 0;
  let bytes = 0;
  let cursor = '0';
  do {
    const [next, page] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    keys += page.length;
    if (page.length === 0) continue;
    const pipeline = redis.pipeline();
    for (const key of page) pipeline.memory('USAGE', key);
    for (const [error, size] of (await pipeline.exec()) ?? []) if (!error) bytes += Number(size ?? 0);
  } while (cursor !== '0');
  return { keys, bytes };
}

/** INFO memory `used_memory`, the whole server's (other tenants included). */
export async function redisUsedMemory(redis: Redis): Promise<number> {
  const info = await redis.info('memory');
  return Number(/^used_memory:(\d+)/m.exec(info)?.[1] ?? Number.NaN);
}

/** INFO cpu: the server's user + system CPU seconds so far. */
export async function redisCpuSeconds(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const user = Number(/^used_cpu_user:([\d.]+)/m.exec(info)?.[1] ?? Number.NaN);
  const system = Number(/^used_cpu_sys:([\d.]+)/m.exec(info)?.[1] ?? Number.NaN);
  return user + system;
}

export async function redisVersion(redis: Redis): Promise<string> {
  const info = await redis.info('server');
  return /^redis_version:(\S+)/m.exec(info)?.[1] ?? 'unknown';
}

/** One short-lived connection to the run's PostgreSQL. */
export async function withPostgres<T>(fn: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: DATABASE_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export function postgresVersion(): Promise<string> {
  return withPostgres(async (client) => (await client.query('SHOW server_version')).rows[0].server_version as string);
}

/** Drops every schema whose name starts with `prefix` (the schemas of this run's cases). */
export function dropSchemas(prefix: string): Promise<string[]> {
  return withPostgres(async (client) => {
    const { rows } = await client.query('SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)', [prefix]);
    const names = rows.map((row) => row.nspname as string).filter((name) => /^[a-z0-9_]+$/.test(name));
    for (const name of names) await client.query(`DROP SCHEMA IF EXISTS ${name} CASCADE`);
    return names;
  });
}

/** INFO stats `total_commands_processed` (the whole server's). */
export async function redisCommandsProcessed(redis: Redis): Promise<number> {
  const info = await redis.info('stats');
  return Number(/^total_commands_processed:(\d+)/m.exec(info)?.[1] ?? Number.NaN);
}

/**
 * The database's transaction and written-row counters (pg_stat_database, the whole database:
 * other schemas' activity counts too). PostgreSQL publishes them up to a second late.
 */
export function postgresActivity(): Promise<{ transactions: number; rowsWritten: number }> {
  return withPostgres(async (client) => {
    const { rows } = await client.query(
      `SELECT xact_commit + xact_rollback AS transactions, tup_inserted + tup_updated + tup_deleted AS rows_written
         FROM pg_stat_database WHERE datname = current_database()`,
    );
    return { transactions: Number(rows[0].transactions), rowsWritten: Number(rows[0].rows_written) };
  });
}
