import type { RedisClient } from '../redis/redis-connection';

/**
 * The key naming the deployment that owns a prefix. It sits beside the queues it guards (the
 * queue prefix, a hash tag on a cluster, so on the queues' node): a Redis, or a cluster's
 * master, that comes back empty has lost both at once, and the next process to start or
 * reconnect simply claims the prefix again.
 */
export function deploymentKey(queuePrefix: string): string {
  return `${queuePrefix}:deployment`;
}

/** `ours`: the prefix is this deployment's (claimed now or before); `taken`: another's, named by `holder`. */
export type PrefixClaim = { kind: 'ours'; claimedNow: boolean } | { kind: 'taken'; holder: string };

/**
 * Claims `queuePrefix` on this Redis for `deploymentId` if no deployment holds it yet, and
 * says whose it is. The claim never expires: a prefix stays its deployment's until an
 * operator deletes the key.
 */
export async function claimRedisPrefix(redis: RedisClient, queuePrefix: string, deploymentId: string): Promise<PrefixClaim> {
  const key = deploymentKey(queuePrefix);
  // A holder that vanishes between the two commands (an operator deleting the key) is
  // claimed on the next pass; twice is enough unless someone deletes it in a loop.
  for (let attempt = 0; attempt < 3; attempt++) {
    if ((await redis.set(key, deploymentId, 'NX')) === 'OK') return { kind: 'ours', claimedNow: true };
    const holder = await redis.get(key);
    if (holder === deploymentId) return { kind: 'ours', claimedNow: false };
    if (holder !== null) return { kind: 'taken', holder };
  }
  throw new Error(`the key ${key} keeps vanishing while it is claimed`);
}
