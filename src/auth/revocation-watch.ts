import type { RedisClient } from '../redis/redis-connection';
import type { Logger } from 'pino';
import type { OpenConnections } from './open-connections';

const REASON = 'the API key was revoked';

export const revocationChannel = (prefix: string) => `${prefix}:key-revoked`;

/** Tells every API process at once that a key was revoked (best effort: the sweep catches up). */
export async function announceRevocation(redis: RedisClient, prefix: string, keyId: string): Promise<void> {
  await redis.publish(revocationChannel(prefix), keyId);
}

/**
 * What follows a revocation committed by this process: it forgets the keys it verified at once
 * (the key's next request here is refused, whatever API_KEY_CACHE_TTL_MS), then every API
 * process is told, which closes the key's open connections. An announcement that fails (Redis
 * down) is reported: the sweep of every process finds the revocation within KEY_REVOCATION_CHECK_MS.
 */
export async function afterRevocation(deps: { forgetKeys(): void; redis: RedisClient; prefix: string; logger: Logger }, keyId: string): Promise<void> {
  deps.forgetKeys();
  try {
    await announceRevocation(deps.redis, deps.prefix, keyId);
  } catch (error) {
    deps.logger.warn({ err: error, keyId }, 'could not announce a revoked key; open connections close at the next sweep');
  }
}

/**
 * Closes the connections of revoked keys on this process: at once on a revocation announced
 * over Redis pub/sub, and in any case within `intervalMs`, by asking the database which of the
 * open connections' keys are revoked (a revocation made while Redis was down, or one whose
 * announcement this process missed).
 *
 * `forgetKeys` (the verified-key cache's clear) runs before a revoked key's connections close,
 * so whoever sees them closed finds the key refused; and on every reconnection of the
 * subscriber, since announcements made while it was away are lost.
 */
export async function startRevocationWatch(deps: {
  connections: OpenConnections;
  forgetKeys(): void;
  revokedAmong(keyIds: string[]): Promise<string[]>;
  subscriber: RedisClient;
  prefix: string;
  intervalMs: number;
  logger: Logger;
}): Promise<{ stop(): Promise<void> }> {
  const close = (keyId: string) => {
    deps.forgetKeys();
    const closed = deps.connections.closeKey(keyId, REASON);
    if (closed > 0) deps.logger.info({ keyId, closed }, 'closed the connections of a revoked key');
  };
  const channel = revocationChannel(deps.prefix);
  const onMessage = (from: string, keyId: string) => {
    if (from === channel) close(keyId);
  };
  const onReconnect = () => deps.forgetKeys();
  deps.subscriber.on('message', onMessage);
  deps.subscriber.on('ready', onReconnect);
  await deps.subscriber.subscribe(channel);

  let sweeping: Promise<void> = Promise.resolve();
  const sweep = async () => {
    const keyIds = deps.connections.keyIds();
    if (keyIds.length === 0) return;
    try {
      for (const keyId of await deps.revokedAmong(keyIds)) close(keyId);
    } catch (error) {
      deps.logger.warn({ err: error }, 'could not check open connections for revoked keys; trying again later');
    }
  };
  const timer = setInterval(() => {
    sweeping = sweeping.then(sweep);
  }, deps.intervalMs);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      deps.subscriber.off('message', onMessage);
      deps.subscriber.off('ready', onReconnect);
      await deps.subscriber.unsubscribe(channel).catch(() => undefined);
      await sweeping;
    },
  };
}
