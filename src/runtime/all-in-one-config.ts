import { createHash } from 'node:crypto';
import { loadConfig, type Config } from '../config/config';

/**
 * The configuration of `npm start`: the environment over the all-in-one's own defaults
 * (`defaults`, e.g. its example tools and the pretty log format), and, on the embedded
 * database, a REDIS_PREFIX of the DATA_DIR's own unless one is set: two checkouts started on one
 * machine meet on its Redis (127.0.0.1:6379), and with one prefix they would share queues.
 * With DATABASE_URL set the all-in-one may join `npm run api` / `worker` processes of that
 * database, so it keeps the prefix they use.
 */
export function allInOneConfig(env: NodeJS.ProcessEnv, defaults: Record<string, string> = {}): Config {
  const plain = loadConfig({ ...defaults, ...env });
  if (plain.DATABASE_URL || env.REDIS_PREFIX !== undefined) return plain;
  return loadConfig({ ...defaults, REDIS_PREFIX: dataDirRedisPrefix(plain.DATA_DIR), ...env });
}

/**
 * `switchyard-` and a hash of the DATA_DIR's absolute path: the same folder always gets the
 * same prefix, and a copy of the folder (its database and deployment id with it) another one.
 * A moved folder gets a new prefix; its unfinished turns are queued again from the database by
 * the reconciler.
 */
export function dataDirRedisPrefix(absoluteDataDir: string): string {
  return `switchyard-${createHash('sha256').update(absoluteDataDir).digest('hex').slice(0, 12)}`;
}
