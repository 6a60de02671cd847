import { Router } from 'express';
import type { Registry } from 'prom-client';

export interface HealthDeps {
  /** Resolves when Redis and the database both answer. */
  checkReady(): Promise<{ redis: boolean; database: boolean }>;
  registry: Registry;
}

/** `/healthz` (the process is alive), `/readyz` (its dependencies answer) and `/metrics`. */
export function healthRouter(deps: HealthDeps): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const checks = await deps.checkReady();
    const ready = checks.redis && checks.database;
    if (!ready) res.setHeader('Retry-After', '5');
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'unavailable', checks });
  });
  router.get('/metrics', async (_req, res) => {
    res.setHeader('content-type', deps.registry.contentType);
    res.send(await deps.registry.metrics());
  });
  return router;
}
