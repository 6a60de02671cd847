import { Router } from 'express';
import type { Registry } from 'prom-client';

/** One dependency as `/readyz` reports it. */
export interface DependencyCheck {
  ok: boolean;
  /** How long it took to answer, when it did. */
  latencyMs?: number;
  /** Why it did not answer, in words an operator acts on. */
  error?: string;
  /** When the answer was had, for a check whose answer is kept a while (the provider's). */
  checkedAt?: string;
}

export interface ReadinessReport {
  redis: DependencyCheck;
  database: DependencyCheck;
  /** Absent in a process that has no provider of its own to check (an API without LLM_BASE_URL). */
  provider?: DependencyCheck;
}

export interface HealthDeps {
  checkReady(): Promise<ReadinessReport>;
  registry: Registry;
}

/**
 * `/healthz` (the process is alive), `/readyz` (its dependencies answer) and `/metrics`.
 *
 * Only Redis and the database decide readiness (503 without either). A provider that does not
 * answer is reported (`degraded`) but the answer stays 200: turns are accepted and queued, and
 * workers retry the provider with backoff, so taking the process out of a load balancer would
 * refuse work that can wait, and would take every process out at once when the provider is down.
 */
export function healthRouter(deps: HealthDeps): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const checks = await deps.checkReady();
    const ready = checks.redis.ok && checks.database.ok;
    if (!ready) res.setHeader('Retry-After', '5');
    const status = !ready ? 'unavailable' : checks.provider && !checks.provider.ok ? 'degraded' : 'ready';
    res.status(ready ? 200 : 503).json({ status, checks });
  });
  router.get('/metrics', async (_req, res) => {
    res.setHeader('content-type', deps.registry.contentType);
    res.send(await deps.registry.metrics());
  });
  return router;
}
