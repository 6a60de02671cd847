import type { DependencyCheck, ReadinessReport } from '../api/health-router';
import { connectionFailureReason } from '../errors/connection-failure';
import type { ModelProvider } from '../providers/model-provider';

/** Redis and PostgreSQL answer a ping within milliseconds; past this they are as good as down. */
export const STORE_CHECK_TIMEOUT_MS = 1_000;
/** A provider's model list may take a round trip across the internet, and a TLS handshake. */
export const PROVIDER_CHECK_TIMEOUT_MS = 2_000;
/**
 * How long a provider's answer is kept. Probes hit `/readyz` every few seconds from every
 * process; a hosted provider counts each `GET /models` against the key's limits.
 */
export const PROVIDER_CHECK_TTL_MS = 30_000;

export interface ReadinessDeps {
  /** The fail-fast connection: it refuses commands while it is not connected. */
  redis: { ping(): Promise<unknown>; status: string };
  db: { query(sql: string): Promise<unknown> };
  /** The provider this process talks to; absent when it has none of its own. */
  provider?: Pick<ModelProvider, 'checkReachable'>;
  /** Injectable clock for the provider's cache (milliseconds). */
  now?: () => number;
}

/** What `/readyz` reports: Redis and PostgreSQL asked each time, the provider at most every {@link PROVIDER_CHECK_TTL_MS}. */
export function createReadinessCheck(deps: ReadinessDeps): () => Promise<ReadinessReport> {
  const now = deps.now ?? Date.now;
  const provider = deps.provider;
  const providerCheck = provider
    ? keptFor(PROVIDER_CHECK_TTL_MS, now, async () => ({
        ...(await probe(() => provider.checkReachable(PROVIDER_CHECK_TIMEOUT_MS), PROVIDER_CHECK_TIMEOUT_MS)),
        checkedAt: new Date(now()).toISOString(),
      }))
    : undefined;
  // ioredis's refusal names its offline queue, not the outage: say what the connection is doing.
  const pingRedis = () => (deps.redis.status === 'ready' ? deps.redis.ping() : Promise.reject(new Error(`not connected (${deps.redis.status})`)));
  return async () => {
    const [redis, database, providerResult] = await Promise.all([
      probe(pingRedis, STORE_CHECK_TIMEOUT_MS),
      probe(() => deps.db.query('SELECT 1'), STORE_CHECK_TIMEOUT_MS),
      providerCheck?.(),
    ]);
    return { redis, database, ...(providerResult ? { provider: providerResult } : {}) };
  };
}

/** Runs one check; never throws. Past `timeoutMs` it fails even if the call never settles. */
async function probe(check: () => Promise<unknown>, timeoutMs: number): Promise<DependencyCheck> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${timeoutMs} ms`)), timeoutMs);
  });
  try {
    await Promise.race([check(), timedOut]);
    return { ok: true, latencyMs: Math.round(performance.now() - started) };
  } catch (error) {
    return { ok: false, error: connectionFailureReason(error) };
  } finally {
    clearTimeout(timer);
  }
}

/** The same answer (or the same check under way) for `ttlMs`, so concurrent probes share one request. */
function keptFor<T>(ttlMs: number, now: () => number, check: () => Promise<T>): () => Promise<T> {
  let kept: { at: number; answer: Promise<T> } | undefined;
  return () => {
    if (!kept || now() - kept.at >= ttlMs) kept = { at: now(), answer: check() };
    return kept.answer;
  };
}
