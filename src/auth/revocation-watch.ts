import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { OpenConnections } from './open-connections';

const REASON = 'the API key was revoked';

export const revocationChannel = (prefix: string) => `${prefix}:key-revoked`;

/** Tells every API process at once that a key was revoked (best effort: the sweep catches up). */
export async function announceRevocation(redis: Redis, prefix: string, keyId: string): Promise<void> {
  await redis.publish(revocationChannel(prefix), keyId);
}

/**
 * Closes the connections of revoked keys on this process: at once on a revocation announced
 * over Redis pub/sub, and in any case within `intervalMs`, by asking the database which of the
 * open connections' keys are revoked (a revocation made while Redis was down, or one whose
 * announcement this process missed).
 */
export async function startRevocationWatch(deps: {
  connections: OpenConnections;
  revokedAmong(keyIds: string[]): Promise<string[]>;
  subscriber: Redis;
  prefix: string;
  intervalMs: number;
  logger: Logger;
}): Promise<{ stop(): Promise<void> }> {
  const close = (keyId: string) => {
    const closed = deps.connections.closeKey(keyId, REASON);
    if (closed > 0) deps.logger.info({ keyId, closed }, 'closed the connections of a revoked key');
  };
  const channel = revocationChannel(deps.prefix);
  const onMessage = (from: string, keyId: string) => {
    if (from === channel) close(keyId);
  };
  deps.subscriber.on('message', onMessage);
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
      await deps.subscriber.unsubscribe(channel).catch(() => undefined);
      await sweeping;
    },
  };
}
