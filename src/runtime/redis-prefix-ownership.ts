import type { Logger } from 'pino';
import { StartupError } from '../errors/startup-error';
import { claimRedisPrefix, deploymentKey } from '../queue/redis-prefix-claim';
import type { RedisClient } from '../redis/redis-connection';

export class RedisPrefixTakenError extends StartupError {
  override readonly code = 'redis_prefix_taken';
}

export interface PrefixOwnership {
  redis: RedisClient;
  /** REDIS_PREFIX as configured, for the message. */
  redisPrefix: string;
  /** BullMQ's prefix (a hash tag on a cluster), under which the claim is kept. */
  queuePrefix: string;
  /** This database's deployment id. */
  deploymentId: string;
  /** The Redis, for the message (no credentials). */
  where: string;
}

/**
 * At start: REDIS_PREFIX on this Redis is claimed for this database's deployment, or the start
 * ends with one line naming REDIS_PREFIX. Two databases on one prefix would share its queues,
 * each one's workers taking the other's turns and finding them nowhere.
 */
export async function assertRedisPrefixOurs(ownership: PrefixOwnership): Promise<void> {
  const claim = await claimRedisPrefix(ownership.redis, ownership.queuePrefix, ownership.deploymentId);
  if (claim.kind === 'taken') throw new RedisPrefixTakenError(prefixTakenLine(ownership, claim.holder));
}

/**
 * After a reconnection: a Redis that came back empty lost the claim with the queues, so it is
 * made again. Finding the prefix another deployment's by then (one started on it while Redis
 * was empty) can no longer stop this process: it is said as loudly as a log can.
 */
export async function reclaimRedisPrefix(ownership: PrefixOwnership, logger: Logger): Promise<void> {
  try {
    const claim = await claimRedisPrefix(ownership.redis, ownership.queuePrefix, ownership.deploymentId);
    if (claim.kind === 'taken') logger.error({ deploymentId: ownership.deploymentId, holder: claim.holder }, prefixTakenLine(ownership, claim.holder));
    else if (claim.claimedNow) logger.warn({ redisPrefix: ownership.redisPrefix }, 'Redis came back without the claim of REDIS_PREFIX (it lost its data?): claimed it again');
  } catch (error) {
    // The connection dropped again: the next reconnection tries again.
    logger.warn({ err: error }, 'could not check the claim of REDIS_PREFIX after a reconnection');
  }
}

function prefixTakenLine(ownership: PrefixOwnership, holder: string): string {
  return (
    `REDIS_PREFIX "${ownership.redisPrefix}" on ${ownership.where} belongs to another deployment (deployment ${holder}; this database is deployment ${ownership.deploymentId}): ` +
    `set REDIS_PREFIX to a prefix of this database's own, or, if that deployment is gone for good, delete the key "${deploymentKey(ownership.queuePrefix)}"`
  );
}
