import { Router } from 'express';
import type { z } from 'zod';
import type { Registry } from 'prom-client';
import { healthSchema, readinessSchema } from './contract/health-contract';
import { sendJson } from './send-json';

/** One dependency as `/readyz` reports it. */
export type DependencyCheck = ReadinessReport['redis'];
export type ReadinessReport = z.output<typeof readinessSchema>['checks'];

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
    sendJson(res, healthSchema, { status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const checks = await deps.checkReady();
    const ready = checks.redis.ok && checks.database.ok;
    if (!ready) res.setHeader('Retry-After', '5');
    const status = !ready ? 'unavailable' : checks.provider && !checks.provider.ok ? 'degraded' : 'ready';
    sendJson(res, readinessSchema, { status, checks }, ready ? 200 : 503);
  });
  router.get('/metrics', async (_req, res) => {
    res.setHeader('content-type', deps.registry.contentType);
    res.send(await deps.registry.metrics());
  });
  return router;
}
