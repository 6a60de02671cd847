import type { Config } from '../config/config';

/**
 * BullMQ's key prefix. On a Redis Cluster it is a hash tag (`{switchyard}`): a queue's Lua
 * scripts touch many of its keys at once, and a flow adds a turn's tool jobs (tool queue) and
 * its continuation (turn queue) in one transaction, so every key of both queues must hash to
 * one slot. The price is that all queue traffic is served by one master; conversations' event
 * logs, the bulk of the writes, still spread over all of them.
 */
export function queuePrefix(config: Pick<Config, 'REDIS_PREFIX' | 'REDIS_CLUSTER_NODES'>): string {
  return config.REDIS_CLUSTER_NODES ? `{${config.REDIS_PREFIX}}` : config.REDIS_PREFIX;
}
