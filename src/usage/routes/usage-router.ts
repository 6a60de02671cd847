import { Router } from 'express';
import { userIdOf } from '../../api/require-user';
import { sendJson } from '../../api/send-json';
import { parseInput } from '../../api/validate';
import type { UsageLedgerRepository } from '../store/usage-ledger-repository';
import { adminUsageQuerySchema, usageQuerySchema, usageReportSchema } from './usage-contract';

export interface UsageRouterDeps {
  ledger: Pick<UsageLedgerRepository, 'summarise'>;
}

/** `GET /v1/usage`: the user's own. */
export function usageRouter(deps: UsageRouterDeps): Router {
  const router = Router();
  router.get('/', async (req, res) => {
    const query = parseInput(usageQuerySchema, req.query);
    sendJson(res, usageReportSchema, await deps.ledger.summarise({ ...query, userId: userIdOf(res) }));
  });
  return router;
}

/** `GET /v1/admin/usage`: across users, or one's. */
export function adminUsageRouter(deps: UsageRouterDeps): Router {
  const router = Router();
  router.get('/', async (req, res) => {
    sendJson(res, usageReportSchema, await deps.ledger.summarise(parseInput(adminUsageQuerySchema, req.query)));
  });
  return router;
}
