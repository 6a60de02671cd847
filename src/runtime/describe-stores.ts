import type { Config } from '../config/config';
import { redactUrl } from '../errors/connection-failure';
import { embeddedDatabaseDir } from '../store/embedded-database';
import { describeRedisTarget, type RedisTarget } from '../redis/redis-connection';

/**
 * The Redis and the database a process uses, without credentials, for its start banner or
 * "started" line: two deployments that meet by mistake are told apart by these.
 */
export function describeStores(input: { config: Pick<Config, 'DATABASE_URL' | 'DATABASE_SCHEMA' | 'DATA_DIR' | 'REDIS_PREFIX'>; redisTarget: RedisTarget }): {
  redis: string;
  database: string;
} {
  const { config } = input;
  const schema = config.DATABASE_SCHEMA === 'public' ? '' : ` (schema ${config.DATABASE_SCHEMA})`;
  return {
    redis: `${describeRedisTarget(input.redisTarget)} (REDIS_PREFIX ${config.REDIS_PREFIX})`,
    database: config.DATABASE_URL ? `PostgreSQL at ${redactUrl(config.DATABASE_URL)}${schema}` : `the embedded PGlite in ${embeddedDatabaseDir(config.DATA_DIR)}${schema}`,
  };
}
